// A user's program, type-checked against the installed tarballs (test/packaging/check.mjs).
import { createAppClient, createIngestClient, exportEvents, NotFoundError, uploadEvents, verifyWebhook, type ExportedEvent } from '@svc/client';
import { evaluateFlags, murmur3X86_32 } from '@svc/evaluation';

const app = createAppClient({ apiKey: 'key', secretKey: 'secret', baseUrl: 'http://127.0.0.1:1' });
const ingest = createIngestClient({ apiKey: 'key', baseUrl: 'http://127.0.0.1:1' });

export async function use(): Promise<number> {
  const { data } = await app.GET('/api/3/cohorts');
  const cohorts: number = data?.cohorts.length ?? 0;
  for await (const event of exportEvents(app, '20261120T00', '20261120T01')) {
    const id: string | null = (event as ExportedEvent).$insert_id;
    void id;
  }
  await uploadEvents(ingest, [{ event_type: 'Play', user_id: 'user-1' }]);
  verifyWebhook<{ events: unknown[] }>('{}', new Headers(), 'whsec_x').events.length;
  void evaluateFlags;
  return cohorts + murmur3X86_32('x', 0) + (new NotFoundError('x', 404, {}) instanceof Error ? 1 : 0);
}
// @ts-expect-error the API key is a string: the packages' types are really there (not any)
createIngestClient({ apiKey: 42 });
