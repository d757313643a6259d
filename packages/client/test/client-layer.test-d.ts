import { describe, expectTypeOf, it } from 'vitest';
import {
  ConnectionError,
  NotFoundError,
  RateLimitError,
  SvcError,
  createAppClient,
  createIngestClient,
  listCohorts,
  listDeletionJobs,
  listReplayFiles,
  listReplays,
  uploadEvents,
  type AppClient,
  type Cohort,
  type DeletionJob,
  type Listing,
  type SessionReplay,
} from '../src/index.js';

declare const someError: SvcError;
declare const thrown: unknown;
const credentials = { apiKey: 'a', secretKey: 's' };

describe('client options', () => {
  it('takes numbers for maxRetries and timeout, a logger of functions, a boolean throwOnError', () => {
    createAppClient({ ...credentials, maxRetries: 3, timeout: 5_000, logger: console, throwOnError: false });
    // @ts-expect-error maxRetries is a number
    createAppClient({ ...credentials, maxRetries: 'x' });
    // @ts-expect-error timeout is milliseconds, not a duration text
    createAppClient({ ...credentials, timeout: '5s' });
    // @ts-expect-error a logger's levels are functions
    createAppClient({ ...credentials, logger: { debug: 1 } });
    // @ts-expect-error throwOnError is a boolean
    createAppClient({ ...credentials, throwOnError: 'yes' });
  });

  it('takes maxRetries and timeout per call, type-checked like the rest of the call', () => {
    const app = createAppClient(credentials);
    void app.GET('/api/3/cohorts', { maxRetries: 0, timeout: 1_000 });
    // @ts-expect-error maxRetries is a number
    void app.GET('/api/3/cohorts', { maxRetries: 'x' });
    // @ts-expect-error timeout is a number
    void app.GET('/api/3/cohorts', { timeout: null });
    // @ts-expect-error the query is still checked
    void app.GET('/api/3/cohorts', { params: { query: { includeSyncInfo: 'yes' } }, maxRetries: 1 });
  });
});

describe('results', () => {
  it('keeps { data, error, response } by default, and gives data without undefined with throwOnError', async () => {
    const lenient = await createAppClient(credentials).GET('/api/3/cohorts');
    expectTypeOf<Extract<typeof lenient.data, undefined>>().toEqualTypeOf<undefined>();
    expectTypeOf(lenient.data?.cohorts[0]?.id).toEqualTypeOf<string | undefined>();
    expectTypeOf(lenient.response).toEqualTypeOf<Response>();

    const strict = await createAppClient({ ...credentials, throwOnError: true }).GET('/api/3/cohorts');
    expectTypeOf<Extract<typeof strict.data, undefined>>().toBeNever();
    expectTypeOf(strict.data.cohorts[0]!.id).toEqualTypeOf<string>();
    expectTypeOf(strict.error).toEqualTypeOf<undefined>();
    expectTypeOf(strict.response).toEqualTypeOf<Response>();
  });

  it('lets the helpers take a client of either kind, and still no client of another host role', () => {
    const strict = createAppClient({ ...credentials, throwOnError: true });
    expectTypeOf(strict).toMatchTypeOf<AppClient>();
    expectTypeOf(listReplays(strict)).toEqualTypeOf<Listing<SessionReplay>>();
    void uploadEvents(createIngestClient({ apiKey: 'k', throwOnError: true }), []);
    // @ts-expect-error cohorts are served by the application host
    void listCohorts(createIngestClient({ apiKey: 'k', throwOnError: true }));
  });

  it('types the listings’ items and parameters', () => {
    const app = createAppClient(credentials);
    expectTypeOf(listCohorts(app)).toEqualTypeOf<Listing<Cohort>>();
    expectTypeOf(listDeletionJobs(app, { start_day: '2026-01-01', end_day: '2026-12-31' })).toEqualTypeOf<Listing<DeletionJob>>();
    expectTypeOf(listReplayFiles(app, 'd/1', { version: 2 })).toEqualTypeOf<Listing<string>>();
    // @ts-expect-error version is 2 or 3
    void listReplayFiles(app, 'd/1', { version: 4 });
    // @ts-expect-error the listing needs both ends of the range
    void listDeletionJobs(app, { start_day: '2026-01-01' });
  });
});

describe('errors', () => {
  it('has retryAfter only on RateLimitError: reading it needs narrowing', () => {
    const error = someError;
    // @ts-expect-error retryAfter is not on every error
    void error.retryAfter;
    if (error instanceof RateLimitError) expectTypeOf(error.retryAfter).toEqualTypeOf<number | undefined>();
    expectTypeOf(error.status).toEqualTypeOf<number | undefined>();
    expectTypeOf(error.requestId).toEqualTypeOf<string | undefined>();
    expectTypeOf(error.headers).toEqualTypeOf<Headers>();
  });

  it('gives each family its status', () => {
    const error = thrown;
    if (error instanceof NotFoundError) expectTypeOf(error.status).toEqualTypeOf<404>();
    if (error instanceof RateLimitError) expectTypeOf(error.status).toEqualTypeOf<429>();
    if (error instanceof ConnectionError) expectTypeOf(error.status).toEqualTypeOf<undefined>();
    if (error instanceof NotFoundError) {
      // @ts-expect-error issues are those of a 400
      void error.issues;
    }
  });
});
