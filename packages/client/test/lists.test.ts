import { describe, expect, it } from 'vitest';
import { BadRequestError, PermissionDeniedError, createAppClient, listReplayFiles, listReplays, type AppClient } from '../src/index.js';
import * as L from '../src/lists.js';
import { fakeClock } from './fake-clock.js';
import { fakeFetch, json, type Handler } from './fake-fetch.js';

const basic = `Basic ${Buffer.from('api:secret').toString('base64')}`;
const setup = (handler: Handler) => {
  const fake = fakeFetch(handler);
  return { fake, client: createAppClient({ apiKey: 'api', secretKey: 'secret', fetch: fake.fetch, clock: fakeClock().clock }) };
};

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

type Case = [string, (client: AppClient) => AsyncIterable<unknown>, string, string, Record<string, unknown>];

const cases: Case[] = [
  ['listCohorts', (c) => L.listCohorts(c, { includeSyncInfo: true }), '/api/3/cohorts', 'includeSyncInfo=true', { cohorts: [1, 2] }],
  ['listAnnotations', (c) => L.listAnnotations(c, { chart_id: 'c1' }), '/api/3/annotations', 'chart_id=c1', { data: [1, 2] }],
  ['listAnnotationCategories', (c) => L.listAnnotationCategories(c), '/api/3/annotation-categories', '', { data: [1, 2] }],
  ['listEventCategories', (c) => L.listEventCategories(c), '/api/2/taxonomy/category', '', { success: true, data: [1, 2] }],
  ['listEventTypes', (c) => L.listEventTypes(c, { showDeleted: true }), '/api/2/taxonomy/event', 'showDeleted=true', { success: true, data: [1, 2] }],
  ['listEventProperties', (c) => L.listEventProperties(c, { event_type: 'Play' }), '/api/2/taxonomy/event-property', 'event_type=Play', { success: true, data: [1, 2] }],
  ['listUserProperties', (c) => L.listUserProperties(c), '/api/2/taxonomy/user-property', '', { success: true, data: [1, 2] }],
];

describe('one-page listings', () => {
  it.each(cases)('%s yields every listed item, asking only once iterated', async (_name, list, path, query, body) => {
    const { fake, client } = setup(() => json(200, body));
    const items = list(client);
    expect(fake.calls).toHaveLength(0);
    expect(await collect(items)).toEqual([1, 2]);
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]!.url.pathname).toBe(path);
    expect(fake.calls[0]!.url.search.replace(/^\?/, '')).toBe(query);
    expect(fake.calls[0]!.headers.get('authorization')).toBe(basic);
  });

  it('throws the error of the status, after the retries of a GET', async () => {
    const { fake, client } = setup(() => json(403, { success: false, errors: [{ message: 'Enterprise only' }] }));
    await expect(collect(L.listEventTypes(client))).rejects.toBeInstanceOf(PermissionDeniedError);
    expect(fake.calls).toHaveLength(1);

    const flaky = setup((_r, i) => (i < 2 ? json(503, {}) : json(200, { cohorts: ['c'] })));
    expect(await collect(L.listCohorts(flaky.client))).toEqual(['c']);
    expect(flaky.fake.calls).toHaveLength(3);
  });
});

describe('listDeletionJobs', () => {
  it('walks a range longer than one listing in windows of at most 181 days, in order', async () => {
    const { fake, client } = setup((request) => json(200, [{ day: request.url.searchParams.get('start_day'), status: 'Done', svc_ids: [] }]));
    const jobs = await collect(L.listDeletionJobs(client, { start_day: '2026-01-01', end_day: '2026-12-31' }));
    const ranges = fake.calls.map((call) => [call.url.searchParams.get('start_day'), call.url.searchParams.get('end_day')]);
    expect(ranges).toEqual([
      ['2026-01-01', '2026-06-30'],
      ['2026-07-01', '2026-12-28'],
      ['2026-12-29', '2026-12-31'],
    ]);
    expect(jobs.map((job) => job.day)).toEqual(['2026-01-01', '2026-07-01', '2026-12-29']);
  });

  it('asks once for a short range, and sends days that are not a range as they are (400)', async () => {
    const short = setup(() => json(200, []));
    expect(await collect(L.listDeletionJobs(short.client, { start_day: '2026-11-01', end_day: '2026-11-30' }))).toEqual([]);
    expect(short.fake.calls).toHaveLength(1);

    const bad = setup(() => json(400, { code: 400, error: 'end_day is before start_day' }));
    const failure = collect(L.listDeletionJobs(bad.client, { start_day: '2026-11-30', end_day: '2026-11-01' }));
    await expect(failure).rejects.toBeInstanceOf(BadRequestError);
    expect(bad.fake.calls[0]!.url.search).toBe('?start_day=2026-11-30&end_day=2026-11-01');
  });
});

describe('listUserEvents', () => {
  it('reads 1000 events a request from the offset after those read, until a shorter page', async () => {
    const page = (n: number, from: number) => Array.from({ length: n }, (_, i) => ({ event_id: from + i }));
    const { fake, client } = setup((request) => {
      const offset = Number(request.url.searchParams.get('offset'));
      return json(200, { userData: {}, events: offset === 0 ? page(1000, 0) : page(3, offset) });
    });
    const events = await collect(L.listUserEvents(client, { user: 510384112467, direction: 'earliest' }));
    expect(events).toHaveLength(1003);
    expect(fake.calls.map((call) => call.url.search)).toEqual([
      '?user=510384112467&direction=earliest&limit=1000&offset=0',
      '?user=510384112467&direction=earliest&limit=1000&offset=1000',
    ]);
  });
});

describe('token-paged listings', () => {
  it('follows next_page_token across pages, retrying a page the service could not answer', async () => {
    const pages: Record<string, { session_replays: { replay_id: string }[]; next_page_token: string | null }> = {
      '': { session_replays: [{ replay_id: 'a/1' }], next_page_token: 'p2' },
      p2: { session_replays: [{ replay_id: 'b/2' }, { replay_id: 'c/3' }], next_page_token: 'p3' },
      p3: { session_replays: [], next_page_token: null },
    };
    let failedOnce = false;
    const { fake, client } = setup((request) => {
      const token = request.url.searchParams.get('page_token') ?? '';
      if (token === 'p2' && !failedOnce) {
        failedOnce = true;
        return json(502, {});
      }
      return json(200, pages[token]);
    });
    const replays = await collect(listReplays(client, { sort_order: 'asc' }));
    expect(replays.map((replay) => replay.replay_id)).toEqual(['a/1', 'b/2', 'c/3']);
    expect(fake.calls.map((call) => call.url.searchParams.get('page_token'))).toEqual([null, 'p2', 'p2', 'p3']);
  });

  it('lists the file links of a replay page by page, with the version and page size on every page', async () => {
    const { fake, client } = setup((request) =>
      request.url.searchParams.has('page_token')
        ? json(200, { files: ['https://files/2'], next_page_token: null })
        : json(200, { files: ['https://files/0', 'https://files/1'], next_page_token: 'f2' }),
    );
    const links = listReplayFiles(client, 'dev/1', { version: 2, pageSize: 2 });
    expect(await links.next()).toEqual({ done: false, value: 'https://files/0' });
    expect(fake.calls).toHaveLength(1);
    expect(await collect(links)).toEqual(['https://files/1', 'https://files/2']);
    expect(fake.calls.map((call) => call.url.search)).toEqual([
      '?replay_id=dev%2F1&version=2&page_size=2',
      '?replay_id=dev%2F1&version=2&page_size=2&page_token=f2',
    ]);
  });
});
