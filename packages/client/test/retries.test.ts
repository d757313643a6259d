import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ConnectionError,
  MAX_BACKOFF_MS,
  TimeoutError,
  backoffMs,
  createAppClient,
  createIngestClient,
  type ClientBaseOptions,
} from '../src/index.js';
import { fakeClock } from './fake-clock.js';
import { fakeFetch, json, type Handler } from './fake-fetch.js';

/** An app client on a fake fetch answering `statuses` in turn (then 200), with a fake clock. */
function app(handler: Handler, options: Partial<ClientBaseOptions> = {}) {
  const fake = fakeFetch(handler);
  const time = fakeClock();
  const client = createAppClient({ apiKey: 'api', secretKey: 'secret', fetch: fake.fetch, clock: time.clock, ...options });
  return { client, fake, time };
}

const answers = (...statuses: number[]): Handler => (_request, index) =>
  index < statuses.length ? json(statuses[index]!, { code: statuses[index], error: 'busy' }) : json(200, { cohorts: [] });

const listCohorts = (client: ReturnType<typeof app>['client'], init = {}) => client.GET('/api/3/cohorts', init);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('retries', () => {
  it('retries an idempotent request after 5xx, 429 and 408, up to maxRetries (default 2)', async () => {
    for (const status of [500, 502, 503, 504, 429, 408]) {
      const { client, fake, time } = app(answers(status, status));
      const { data, response } = await listCohorts(client);
      expect(data).toEqual({ cohorts: [] });
      expect(response.status).toBe(200);
      expect(fake.calls).toHaveLength(3);
      expect(time.sleeps).toHaveLength(2);
    }
    const { client, fake } = app(answers(503, 503, 503, 503));
    const { error, response } = await listCohorts(client);
    expect(response.status).toBe(503);
    expect(error).toEqual({ code: 503, error: 'busy' });
    expect(fake.calls).toHaveLength(3);
  });

  it('retries PUT and DELETE like GET, with the same form body each time', async () => {
    const put = app(answers(503));
    const path = { category: 412 };
    await put.client.PUT('/api/2/taxonomy/category/{category}', { params: { path }, body: { category_name: 'Checkout' } });
    expect(put.fake.calls.map((call) => [call.method, call.body])).toEqual([
      ['PUT', 'category_name=Checkout'],
      ['PUT', 'category_name=Checkout'],
    ]);
    const del = app(answers(500, 502));
    await del.client.DELETE('/api/2/taxonomy/category/{category}', { params: { path } });
    expect(del.fake.calls.map((call) => call.method)).toEqual(['DELETE', 'DELETE', 'DELETE']);
  });

  it('takes maxRetries from the client and from each call (0: no retry)', async () => {
    const many = app(answers(500, 500, 500, 500), { maxRetries: 4 });
    expect((await listCohorts(many.client)).response.status).toBe(200);
    expect(many.fake.calls).toHaveLength(5);

    const once = app(answers(500, 500), { maxRetries: 4 });
    expect((await listCohorts(once.client, { maxRetries: 0 })).response.status).toBe(500);
    expect(once.fake.calls).toHaveLength(1);
    expect(() => createAppClient({ apiKey: 'a', secretKey: 'b', maxRetries: -1 })).toThrow(RangeError);
    await expect(listCohorts(once.client, { maxRetries: 1.5 })).rejects.toThrow(/maxRetries/);
  });

  it('waits Retry-After when the answer has one: seconds or an HTTP date', async () => {
    const seconds = app((_r, i) => (i === 0 ? json(429, { error: 'slow down' }, { 'Retry-After': '7' }) : json(200, { cohorts: [] })));
    await listCohorts(seconds.client);
    expect(seconds.time.sleeps).toEqual([7000]);

    const at = new Date(Date.now() + 20_000).toUTCString();
    const date = app((_r, i) => (i === 0 ? json(503, {}, { 'Retry-After': at }) : json(200, { cohorts: [] })));
    await listCohorts(date.client);
    expect(date.time.sleeps).toHaveLength(1);
    expect(date.time.sleeps[0]).toBeGreaterThan(18_000);
    expect(date.time.sleeps[0]).toBeLessThanOrEqual(20_000);
  });

  it('hands back an answer whose Retry-After is longer than a minute instead of waiting', async () => {
    const { client, fake, time } = app(() => json(429, { error: 'quota' }, { 'Retry-After': '3600' }));
    expect((await listCohorts(client)).response.status).toBe(429);
    expect(fake.calls).toHaveLength(1);
    expect(time.sleeps).toEqual([]);
  });

  it('backs off with full jitter: each wait is within [0, min(8 s, 0.5 s × 2^retry))', async () => {
    const { client, time } = app(answers(...Array<number>(8).fill(503)), { maxRetries: 8 });
    await listCohorts(client);
    expect(time.sleeps).toHaveLength(8);
    time.sleeps.forEach((ms, retry) => {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(Math.min(MAX_BACKOFF_MS, 500 * 2 ** retry));
    });
    expect(backoffMs(0, () => 0)).toBe(0);
    expect(backoffMs(1, () => 0.5)).toBe(500);
    expect(backoffMs(10, () => 0.999)).toBeCloseTo(7992);
  });

  it('never retries a POST other than the event uploads, nor a 409 or another 4xx', async () => {
    const post = app(answers(503));
    const { response } = await post.client.POST('/api/2/deletions/users', { body: { user_ids: ['a'] } });
    expect(response.status).toBe(503);
    expect(post.fake.calls).toHaveLength(1);

    for (const status of [400, 401, 403, 404, 409, 413]) {
      const { client, fake } = app(answers(status));
      expect((await listCohorts(client)).response.status).toBe(status);
      expect(fake.calls).toHaveLength(1);
    }
  });

  it('retries the event uploads (their insert_id makes a repeat safe), sending the same body again', async () => {
    for (const path of ['/batch', '/2/httpapi'] as const) {
      const fake = fakeFetch((_r, i) => (i === 0 ? json(503, {}) : json(200, { code: 200, events_ingested: 1, payload_size_bytes: 9, server_upload_time: 1 })));
      const ingest = createIngestClient({ apiKey: 'key', fetch: fake.fetch, clock: fakeClock().clock });
      const { data } = await ingest.POST(path, { body: { events: [{ event_type: 'A', user_id: 'u-1', insert_id: 'i-1' }] } });
      expect(data?.events_ingested).toBe(1);
      expect(fake.calls).toHaveLength(2);
      expect(fake.calls[1]!.body).toBe(fake.calls[0]!.body);
      expect(JSON.parse(fake.calls[1]!.body)).toMatchObject({ api_key: 'key', events: [{ insert_id: 'i-1' }] });
    }
  });

  it('retries a failed connection, then rejects with a ConnectionError whose cause is what fetch threw', async () => {
    const { client, fake } = app(() => {
      throw new TypeError('fetch failed');
    });
    const failure = await listCohorts(client).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConnectionError);
    expect((failure as ConnectionError).cause).toBeInstanceOf(TypeError);
    expect((failure as ConnectionError).status).toBeUndefined();
    expect(fake.calls).toHaveLength(3);

    const { client: flaky, fake: flakyFake } = app((_r, i) => {
      if (i === 0) throw new TypeError('socket hang up');
      return json(200, { cohorts: [] });
    });
    expect((await listCohorts(flaky)).data).toEqual({ cohorts: [] });
    expect(flakyFake.calls).toHaveLength(2);
  });

  it('fails an attempt that takes longer than timeout with a TimeoutError, retried like a failed connection', async () => {
    const signals: AbortSignal[] = [];
    const hang = ((request: Request) =>
      new Promise<Response>(() => {
        signals.push(request.signal);
      })) as typeof globalThis.fetch;
    const time = fakeClock();
    const client = createAppClient({ apiKey: 'a', secretKey: 'b', fetch: hang, clock: time.clock, timeout: 20, maxRetries: 1 });
    const failure = await client.GET('/api/3/cohorts').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TimeoutError);
    expect(failure).toBeInstanceOf(ConnectionError);
    expect((failure as TimeoutError).message).toBe('GET /api/3/cohorts: no answer within 20 ms');
    expect(signals).toHaveLength(2);
    expect(signals.every((signal) => signal.aborted)).toBe(true);

    const perCall = await client.GET('/api/3/cohorts', { timeout: 10, maxRetries: 0 }).catch((error: unknown) => error);
    expect(perCall).toBeInstanceOf(TimeoutError);
    expect(signals).toHaveLength(3);
  });

  it('rejects with the reason of the caller’s signal, without retrying', async () => {
    const controller = new AbortController();
    const { client, fake } = app(() => {
      controller.abort(new Error('stop'));
      throw new DOMException('aborted', 'AbortError');
    });
    await expect(listCohorts(client, { signal: controller.signal })).rejects.toThrow('stop');
    expect(fake.calls).toHaveLength(1);
  });
});
