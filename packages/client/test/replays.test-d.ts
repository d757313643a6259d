import { describe, expectTypeOf, it } from 'vitest';
import {
  createApiClient,
  createAppClient,
  decodeReplayFile,
  downloadReplay,
  listReplays,
  type RecordedEvent,
  type Listing,
  type SessionReplay,
} from '../src/index.js';

const app = createAppClient({ apiKey: 'k', secretKey: 's' });

describe('listReplays', () => {
  it('yields typed replays and takes the documented filters', () => {
    expectTypeOf(listReplays(app)).toEqualTypeOf<Listing<SessionReplay>>();
    expectTypeOf<SessionReplay['replay_id']>().toEqualTypeOf<string>();
    expectTypeOf<SessionReplay['svc_id']>().toEqualTypeOf<number | null>();
    listReplays(app, { start_time: '2026-11-20T00:00:00Z', end_time: '2026-11-21T00:00:00Z', page_size: 200, sort_order: 'desc' });
  });

  it('rejects wrong filters, a page token and another host role client', () => {
    // @ts-expect-error page_size is a number
    listReplays(app, { page_size: '50' });
    // @ts-expect-error sort_order is asc or desc
    listReplays(app, { sort_order: 'newest' });
    // @ts-expect-error the iterator follows page tokens itself
    listReplays(app, { page_token: 'eyJrIjoi' });
    // @ts-expect-error the replays are served by the application host
    listReplays(createApiClient({ apiKey: 'k' }));
  });
});

describe('downloadReplay', () => {
  it('returns the recorded events', () => {
    expectTypeOf(downloadReplay(app, 'device/session')).toEqualTypeOf<Promise<RecordedEvent[]>>();
    expectTypeOf<RecordedEvent['timestamp']>().toEqualTypeOf<number>();
    downloadReplay(app, 'device/session', { version: 2, pageSize: 1000, concurrency: 2 });
  });

  it('accepts only the documented file versions and a string replay ID', () => {
    // @ts-expect-error version is 2 or 3
    downloadReplay(app, 'device/session', { version: 4 });
    // @ts-expect-error version is a number
    downloadReplay(app, 'device/session', { version: '3' });
    // @ts-expect-error a replay ID is device_id/session_id as a string
    downloadReplay(app, 1763805311000);
    // @ts-expect-error version is 2 or 3
    decodeReplayFile(new Uint8Array(), 1);
    // @ts-expect-error bytes, not text
    decodeReplayFile('[]', 3);
  });
});
