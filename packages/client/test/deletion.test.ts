import { describe, expect, it } from 'vitest';
import { ConnectionError, createAppClient, deleteUsers, type DeletionJob, type UserIdentifier } from '../src/index.js';
import { fakeClock } from './fake-clock.js';
import { fakeFetch, json, type Handler } from './fake-fetch.js';

const job = (extra: Partial<DeletionJob> = {}): DeletionJob => ({ day: '2026-12-21', status: 'Staging', svc_ids: [], ...extra });

/** An app client on a fake fetch whose request start times are read from the fake clock. */
function setup(handler: Handler = () => json(200, job()), time = fakeClock()) {
  const fake = fakeFetch(handler);
  const starts: number[] = [];
  const fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    starts.push(time.now());
    return fake.fetch(input, init);
  }) as typeof globalThis.fetch;
  const client = createAppClient({ apiKey: 'api', secretKey: 'secret', fetch });
  const bodies = () => fake.calls.map((call) => JSON.parse(call.body) as Record<string, unknown>);
  return { client, fake, starts, time, bodies };
}

const mixedIds = (count: number): UserIdentifier[] =>
  Array.from({ length: count }, (_, i) => (i % 3 === 0 ? `user-${i}` : 510_384_000_000 + i));

describe('deleteUsers', () => {
  it('sends at most 100 IDs per request, service IDs and user IDs in their fields, with the request fields', async () => {
    const { client, fake, time, bodies } = setup();
    const ids = mixedIds(250);
    const summary = await deleteUsers(client, ids, { fields: { requester: 'dpo@example.com', ignore_invalid_ids: true }, clock: time.clock });
    expect(summary.requests).toBe(3);
    expect(summary.failures).toEqual([]);
    expect(summary.jobs).toHaveLength(3);
    const chunks = [ids.slice(0, 100), ids.slice(100, 200), ids.slice(200)];
    expect(bodies()).toEqual(
      chunks.map((chunk) => ({
        requester: 'dpo@example.com',
        ignore_invalid_ids: true,
        svc_ids: chunk.filter((id) => typeof id === 'number'),
        user_ids: chunk.filter((id) => typeof id === 'string'),
      })),
    );
    const [call] = fake.calls;
    expect(call!.method).toBe('POST');
    expect(call!.url.pathname).toBe('/api/2/deletions/users');
    expect(call!.headers.get('authorization')).toBe(`Basic ${Buffer.from('api:secret').toString('base64')}`);
  });

  it('omits the field of a kind the chunk does not have', async () => {
    const { client, time, bodies } = setup();
    await deleteUsers(client, ['only-user-ids', 'second'], { clock: time.clock });
    expect(bodies()).toEqual([{ user_ids: ['only-user-ids', 'second'] }]);
  });

  it('starts requests at least one second apart', async () => {
    const { client, starts, time } = setup();
    await deleteUsers(client, mixedIds(450), { clock: time.clock });
    expect(starts).toEqual([0, 1000, 2000, 3000, 4000]);
  });

  it('keeps at most 8 requests in flight when answers are slow', async () => {
    const time = fakeClock();
    const finished: number[] = [];
    const { client, fake, starts } = setup(async () => {
      await time.clock.sleep(20_000);
      finished.push(time.now());
      return json(200, job());
    }, time);
    const summary = await deleteUsers(client, mixedIds(2000), { clock: time.clock });
    expect(summary.requests).toBe(20);
    expect(fake.maxInFlight).toBe(8);
    starts.slice(1).forEach((start, i) => expect(start - starts[i]!).toBeGreaterThanOrEqual(1000));
    expect(starts[8]).toBeGreaterThanOrEqual(Math.min(...finished));
  });

  it('lets a smaller concurrency and a longer interval be chosen, and refuses a shorter interval', async () => {
    const time = fakeClock();
    const { client, fake, starts } = setup(async () => {
      await time.clock.sleep(5_000);
      return json(200, job());
    }, time);
    await deleteUsers(client, mixedIds(500), { clock: time.clock, concurrency: 2, minIntervalMs: 1500 });
    expect(fake.maxInFlight).toBe(2);
    expect(starts.slice(0, 2)).toEqual([0, 1500]);
    await expect(deleteUsers(client, [1], { minIntervalMs: 999 })).rejects.toThrow(RangeError);
    await expect(deleteUsers(client, [1], { concurrency: 0 })).rejects.toThrow(RangeError);
  });

  it('clamps maxIdsPerRequest and concurrency to the documented limits', async () => {
    const time = fakeClock();
    const { client, fake } = setup(async () => {
      await time.clock.sleep(60_000);
      return json(200, job());
    }, time);
    const summary = await deleteUsers(client, mixedIds(1500), { clock: time.clock, maxIdsPerRequest: 150, concurrency: 20 });
    expect(summary.requests).toBe(15);
    expect(fake.maxInFlight).toBe(8);
  });

  it('retries 429 after Retry-After and 5xx after retryDelayMs, pacing the retries too', async () => {
    const answers = [
      json(429, { code: 429, error: 'slow down' }, { 'Retry-After': '3' }),
      json(429, { code: 429, error: 'slow down' }, { 'Retry-After': '0' }),
      json(503, { code: 503, error: 'busy' }),
      json(200, job()),
    ];
    const { client, starts, time } = setup((_request, index) => answers[index]!);
    const summary = await deleteUsers(client, [1, 2], { clock: time.clock, retryDelayMs: 2500 });
    expect(summary).toMatchObject({ requests: 4, failures: [] });
    // 3 s after the first 429; 1 s (the pace) after a Retry-After of 0; 2.5 s after the 503.
    expect(starts).toEqual([0, 3000, 4000, 6500]);
  });

  it('reports a request refused for unknown users without stopping the others, and does not retry it', async () => {
    const unknown = { code: 400, error: 'Users not found in the project: dana-3391', invalid_ids: ['dana-3391'] };
    const { client, time } = setup((request) =>
      (JSON.parse(request.body).user_ids ?? []).includes('dana-3391') ? json(400, unknown) : json(200, job()),
    );
    const ids: UserIdentifier[] = [...mixedIds(100), 'dana-3391', 42];
    const summary = await deleteUsers(client, ids, { clock: time.clock });
    expect(summary.requests).toBe(2);
    expect(summary.jobs).toHaveLength(1);
    expect(summary.failures).toEqual([{ status: 400, error: unknown, indexes: [100, 101], ids: ['dana-3391', 42], attempts: 1 }]);
  });

  it('gives up after maxRetries and reports network errors with status null', async () => {
    const { client, time } = setup(() => {
      throw new TypeError('connection reset');
    });
    const summary = await deleteUsers(client, [7], { clock: time.clock, maxRetries: 2 });
    expect(summary.requests).toBe(3);
    expect(summary.failures).toHaveLength(1);
    expect(summary.failures[0]).toMatchObject({ status: null, indexes: [0], ids: [7], attempts: 3 });
    expect(summary.failures[0]!.error).toBeInstanceOf(ConnectionError);
    expect((summary.failures[0]!.error as ConnectionError).cause).toBeInstanceOf(TypeError);
  });

  it('collects invalid IDs: those of a job, and with delete_from_org those every job of the request lists', async () => {
    const single = setup(() => json(200, job({ invalid_ids: ['former-user-0042', 510384119021] })));
    const one = await deleteUsers(single.client, ['dana-3391', 'former-user-0042', 510384119021], {
      fields: { ignore_invalid_ids: true },
      clock: single.time.clock,
    });
    expect(one.invalidIds).toEqual(['former-user-0042', 510384119021]);

    const org = setup(() => json(200, [job({ app: 187520, invalid_ids: ['a', 'b'] }), job({ app: 187533, invalid_ids: ['b'] })]));
    const across = await deleteUsers(org.client, ['a', 'b', 'c'], { fields: { delete_from_org: true }, clock: org.time.clock });
    expect(across.jobs.map((j) => j.app)).toEqual([187520, 187533]);
    expect(across.invalidIds).toEqual(['b']);
  });

  it('refuses IDs that are neither positive integers nor non-empty strings before sending anything', async () => {
    const { client, fake } = setup();
    await expect(deleteUsers(client, [1, 1.5] as UserIdentifier[])).rejects.toThrow(/ids\[1\]/);
    await expect(deleteUsers(client, [''])).rejects.toThrow(/ids\[0\]/);
    await expect(deleteUsers(client, [-3])).rejects.toThrow(TypeError);
    expect(fake.calls).toHaveLength(0);
  });

  it('sends nothing for no IDs', async () => {
    const { client, fake } = setup();
    expect(await deleteUsers(client, [])).toEqual({ requests: 0, jobs: [], invalidIds: [], failures: [] });
    expect(fake.calls).toHaveLength(0);
  });

  it('rejects when the signal aborts while waiting for its turn', async () => {
    const { client, time } = setup();
    const controller = new AbortController();
    const running = deleteUsers(client, mixedIds(300), { clock: time.clock, signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(running).rejects.toThrow('stop');
  });
});
