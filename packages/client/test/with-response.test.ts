import { describe, expect, it } from 'vitest';
import { NotFoundError, RateLimitError, createAppClient, createExperimentClient, listCohorts, listReplays, listDeletionJobs } from '../src/index.js';
import { fakeClock } from './fake-clock.js';
import { fakeFetch, json, type Handler } from './fake-fetch.js';

const clients = (handler: Handler, options: { throwOnError?: boolean; maxRetries?: number } = {}) => {
  const fake = fakeFetch(handler);
  const common = { apiKey: 'api', secretKey: 'secret', fetch: fake.fetch, clock: fakeClock().clock, ...options };
  return { fake, lenient: createAppClient({ ...common, throwOnError: false }), strict: createAppClient({ ...common, throwOnError: true }) };
};

const cohorts = { cohorts: [{ id: 'c1' }] };

describe('withResponse() on an operation call', () => {
  it.each(['lenient', 'strict'] as const)('gives data, the raw response and the request id (%s client), from one request', async (mode) => {
    const { fake, ...made } = clients(() => json(200, cohorts, { 'X-Request-Id': 'req-1', 'X-Custom': 'seen' }));
    const { data, response, requestId } = await made[mode].GET('/api/3/cohorts').withResponse();
    expect(data).toEqual(cohorts);
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-custom')).toBe('seen');
    expect(requestId).toBe('req-1');
    expect(fake.calls).toHaveLength(1);
  });

  it('reads the same answer as awaiting the call (no second request)', async () => {
    const { fake, lenient } = clients(() => json(200, cohorts, { 'X-Request-Id': 'req-2' }));
    const call = lenient.GET('/api/3/cohorts');
    const [plain, raw] = await Promise.all([call, call.withResponse()]);
    expect(raw.data).toBe(plain.data);
    expect(raw.response).toBe(plain.response);
    expect(fake.calls).toHaveLength(1);
  });

  it.each(['lenient', 'strict'] as const)('rejects with the error of the status on a %s client, after the retries', async (mode) => {
    const { fake, ...made } = clients((_r, i) => (i === 0 ? json(503, {}) : json(404, { code: 404, error: 'no cohort' }, { 'X-Request-Id': 'req-404' })));
    const error = await made[mode].GET('/api/3/cohorts').withResponse().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).requestId).toBe('req-404');
    expect((error as NotFoundError).action).toBe('GET /api/3/cohorts');
    expect(fake.calls).toHaveLength(2);
  });

  it('leaves requestId undefined when the answer has none, and works on request() and other host roles', async () => {
    const { lenient } = clients(() => json(429, { error: 'later' }, { 'Retry-After': '600' }));
    await expect(lenient.request('get', '/api/3/cohorts').withResponse()).rejects.toBeInstanceOf(RateLimitError);

    const fake = fakeFetch(() => json(200, []));
    const experiment = createExperimentClient({ deploymentKey: 'd', fetch: fake.fetch });
    const flags = await experiment.GET('/v1/flags').withResponse();
    expect(flags.data).toEqual([]);
    expect(flags.requestId).toBeUndefined();
  });
});

describe('withResponse() on a listing', () => {
  it('walks the answers of a token-paged listing, each with its items, response and request id', async () => {
    const { fake, lenient } = clients((request) =>
      request.url.searchParams.get('page_token') === 'p2'
        ? json(200, { session_replays: [{ replay_id: 'b/2' }], next_page_token: null }, { 'X-Request-Id': 'page-2' })
        : json(200, { session_replays: [{ replay_id: 'a/1' }], next_page_token: 'p2' }, { 'X-Request-Id': 'page-1' }),
    );
    const answers = [];
    for await (const answer of listReplays(lenient).withResponse()) answers.push(answer);
    expect(answers.map((a) => [a.requestId, a.response.status, a.data.map((r) => r.replay_id)])).toEqual([
      ['page-1', 200, ['a/1']],
      ['page-2', 200, ['b/2']],
    ]);
    expect(fake.calls).toHaveLength(2);
  });

  it('asks anew at each call, independently of iterating the items', async () => {
    const { fake, strict } = clients(() => json(200, cohorts, { 'X-Request-Id': 'req-c' }));
    const listing = listCohorts(strict);
    for await (const answer of listing.withResponse()) expect(answer.requestId).toBe('req-c');
    for await (const cohort of listing) expect(cohort.id).toBe('c1');
    expect(fake.calls).toHaveLength(2);
  });

  it('gives one answer per window of a deletion listing, and throws the error of a failed one', async () => {
    const { lenient } = clients((request) =>
      request.url.searchParams.get('start_day') === '2026-07-01' ? json(404, { error: 'gone' }) : json(200, [{ day: '2026-01-02' }]),
    );
    const seen: unknown[] = [];
    const walk = async () => {
      for await (const answer of listDeletionJobs(lenient, { start_day: '2026-01-01', end_day: '2026-12-31' }).withResponse()) seen.push(answer.data);
    };
    await expect(walk()).rejects.toBeInstanceOf(NotFoundError);
    expect(seen).toEqual([[{ day: '2026-01-02' }]]);
  });
});
