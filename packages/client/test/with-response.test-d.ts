import { describe, expectTypeOf, it } from 'vitest';
import {
  createAppClient,
  createIngestClient,
  listCohorts,
  listReplays,
  uploadEvents,
  type Cohort,
  type SessionReplay,
  type WithResponse,
} from '../src/index.js';

const credentials = { apiKey: 'a', secretKey: 's' };

describe('withResponse() on an operation call', () => {
  it('gives the success data (never undefined), the Response and the request id, whatever throwOnError', async () => {
    for (const client of [createAppClient(credentials), createAppClient({ ...credentials, throwOnError: true })]) {
      const { data, response, requestId } = await client.GET('/api/3/cohorts').withResponse();
      expectTypeOf<Extract<typeof data, undefined>>().toBeNever();
      expectTypeOf(data.cohorts[0]!.id).toEqualTypeOf<string>();
      expectTypeOf(response).toEqualTypeOf<Response>();
      expectTypeOf(requestId).toEqualTypeOf<string | undefined>();
    }
    const csv = await createAppClient(credentials).GET('/api/3/chart/{chart_id}/csv', { params: { path: { chart_id: 'c1' } } }).withResponse();
    expectTypeOf(csv.data).toEqualTypeOf<{ data: string }>();
  });

  it('refuses what it does not offer', async () => {
    const app = createAppClient(credentials);
    const raw = await app.GET('/api/3/cohorts').withResponse();
    // @ts-expect-error errors are thrown: the result has no `error`
    void raw.error;
    // @ts-expect-error the request id may be missing
    const id: string = raw.requestId;
    void id;
    // @ts-expect-error withResponse takes no arguments
    void app.GET('/api/3/cohorts').withResponse({ parseAs: 'text' });
    // @ts-expect-error it is on the call, not on the awaited result
    void (await app.GET('/api/3/cohorts')).withResponse();
    // @ts-expect-error the call is still checked
    void app.GET('/api/3/cohorts', { params: { query: { includeSyncInfo: 'yes' } } }).withResponse();
  });
});

describe('withResponse() on the helpers', () => {
  it('walks a listing answer by answer, each answer with the items of its page', () => {
    const app = createAppClient(credentials);
    expectTypeOf(listReplays(app).withResponse()).toEqualTypeOf<AsyncGenerator<WithResponse<SessionReplay[]>, void, undefined>>();
    expectTypeOf(listCohorts(app).withResponse()).toEqualTypeOf<AsyncGenerator<WithResponse<Cohort[]>, void, undefined>>();
  });

  it('is no promise on a listing, and not offered by helpers that send many requests', async () => {
    const app = createAppClient(credentials);
    // @ts-expect-error a listing's answers are iterated, not awaited
    void (await listCohorts(app).withResponse()).data;
    // @ts-expect-error an upload sends many requests: its summary has their failures instead
    void uploadEvents(createIngestClient({ apiKey: 'k' }), []).withResponse();
  });
});
