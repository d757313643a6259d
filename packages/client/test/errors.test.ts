import { describe, expect, it } from 'vitest';
import * as E from '../src/errors.js';
import { createAppClient, createIngestClient, listReplays, uploadEvents } from '../src/index.js';
import { fakeClock } from './fake-clock.js';
import { fakeFetch, json, type Handler } from './fake-fetch.js';

const throwing = (handler: Handler) => {
  const fake = fakeFetch(handler);
  const client = createAppClient({ apiKey: 'api', secretKey: 'secret', fetch: fake.fetch, throwOnError: true, maxRetries: 0 });
  return { client, fake };
};

const caught = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

describe('throwOnError: true', () => {
  it.each([
    [400, E.BadRequestError],
    [401, E.AuthenticationError],
    [403, E.PermissionDeniedError],
    [404, E.NotFoundError],
    [409, E.ConflictError],
    [413, E.PayloadTooLargeError],
    [429, E.RateLimitError],
    [500, E.InternalServerError],
    [503, E.InternalServerError],
    [418, E.ResponseError],
  ] as const)('throws for %i the error of its family, with status, body, headers and requestId', async (status, Class) => {
    const body = { code: status, error: `refused ${status}` };
    const { client } = throwing(() => json(status, body, { 'X-Request-Id': `req-${status}` }));
    const error = await caught(client.GET('/api/3/cohorts'));
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(E.ResponseError);
    expect(error).toBeInstanceOf(E.SvcError);
    const svc = error as E.SvcError;
    expect(svc.name).toBe(Class.name);
    expect(svc.status).toBe(status);
    expect(svc.body).toEqual(body);
    expect(svc.headers.get('content-type')).toBe('application/json');
    expect(svc.requestId).toBe(`req-${status}`);
    expect(svc.action).toBe('GET /api/3/cohorts');
    expect(svc.message).toBe(`GET /api/3/cohorts: HTTP ${status}: refused ${status}`);
  });

  it('gives a 400 its issues and missing_field, and a 429 its Retry-After in seconds', async () => {
    const issues = [{ path: 'items[0].text', message: 'required' }];
    const bad = E.responseError('x', 400, { code: 400, error: 'invalid', issues, missing_field: 'api_key' });
    expect(bad).toBeInstanceOf(E.BadRequestError);
    expect((bad as E.BadRequestError).issues).toEqual(issues);
    expect((bad as E.BadRequestError).missing_field).toBe('api_key');
    expect((E.responseError('x', 400, 'plain text') as E.BadRequestError).issues).toBeUndefined();

    const { client } = throwing(() => json(429, { error: 'slow down' }, { 'Retry-After': '12' }));
    const limited = (await caught(client.GET('/api/3/cohorts'))) as E.RateLimitError;
    expect(limited.retryAfter).toBe(12);
    expect(limited.requestId).toBeUndefined();
    const dated = new E.RateLimitError('x', 429, {}, new Headers({ 'Retry-After': new Date(Date.now() + 30_000).toUTCString() }));
    expect(dated.retryAfter).toBeGreaterThan(28);
    expect(new E.RateLimitError('x', 429, {}).retryAfter).toBeUndefined();
  });

  it('throws from request() and keeps middleware added with use()', async () => {
    const { client, fake } = throwing(() => json(404, { code: 404, error: 'gone' }));
    client.use({ onRequest: ({ request }) => void request.headers.set('X-Trace', 't-1') });
    await expect(client.request('get', '/api/3/cohorts')).rejects.toBeInstanceOf(E.NotFoundError);
    expect(fake.calls[0]!.headers.get('x-trace')).toBe('t-1');
  });

  it('keeps the ResponseError constructor of before: (action, status, body)', () => {
    const error = new E.ResponseError('reading a file', 500, 'disk on fire');
    expect(error.message).toBe('reading a file: HTTP 500: disk on fire');
    expect([error.status, error.body, error.requestId, [...error.headers]]).toEqual([500, 'disk on fire', undefined, []]);
  });

  it('resolves a 2xx with data and the raw Response', async () => {
    const { client } = throwing(() => json(200, { cohorts: [] }, { 'X-Request-Id': 'r-1' }));
    const { data, response } = await client.GET('/api/3/cohorts');
    expect(data).toEqual({ cohorts: [] });
    expect(response).toBeInstanceOf(Response);
    expect(response.headers.get('x-request-id')).toBe('r-1');
  });

  it('rejects with E.ConnectionError, an E.SvcError without status, when no answer comes', async () => {
    const { client } = throwing(() => {
      throw new TypeError('fetch failed');
    });
    const error = (await caught(client.GET('/api/3/cohorts'))) as E.ConnectionError;
    expect(error).toBeInstanceOf(E.SvcError);
    expect(error).not.toBeInstanceOf(E.ResponseError);
    expect(error.status).toBeUndefined();
    expect(error.requestId).toBeUndefined();
  });

  it('leaves the helpers reading answers as before (they see the non-throwing view)', async () => {
    const { client } = throwing((request) =>
      json(200, { session_replays: [{ replay_id: 'd/1' }], next_page_token: request.url.searchParams.has('page_token') ? null : 't' }),
    );
    const seen: unknown[] = [];
    for await (const replay of listReplays(client)) seen.push(replay);
    expect(seen).toHaveLength(2);

    const fake = fakeFetch((_r, i) => (i === 0 ? json(413, { code: 413, error: 'too large' }) : json(200, { code: 200, events_ingested: 1 })));
    const ingest = createIngestClient({ apiKey: 'k', fetch: fake.fetch, throwOnError: true, clock: fakeClock().clock });
    const summary = await uploadEvents(ingest, [{ event_type: 'A', user_id: 'u-1' }, { event_type: 'B', user_id: 'u-1' }]);
    expect(summary.failures).toEqual([]);
    expect(fake.calls).toHaveLength(3);
  });
});

describe('default (throwOnError unset)', () => {
  it('keeps openapi-fetch’s { data, error, response } for an answer other than 2xx', async () => {
    const fake = fakeFetch(() => json(404, { code: 404, error: 'no cohort' }));
    const client = createAppClient({ apiKey: 'api', secretKey: 'secret', fetch: fake.fetch });
    const { data, error, response } = await client.GET('/api/3/cohorts');
    expect(data).toBeUndefined();
    expect(error).toEqual({ code: 404, error: 'no cohort' });
    expect(response.status).toBe(404);
    expect(E.responseError('GET /api/3/cohorts', response.status, error, response.headers)).toBeInstanceOf(E.NotFoundError);
  });
});
