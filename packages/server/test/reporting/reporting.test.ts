// The reporting operations over HTTP, every answer through the Prism proxy: events sent
// through /batch are counted; bad queries get 400, expensive ones 429; saved charts as CSV.
import { createAppClient } from '@svc/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { saveChart } from '../../src/reporting/charts.js';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';

let h: Harness;
let auth: Record<string, string>;
const at = (day: number, hour: number, minute = 0) => Date.UTC(2026, 10, day, hour, minute);
const json = (value: unknown) => encodeURIComponent(JSON.stringify(value));

beforeAll(async () => {
  h = await startHarness(['ingest', 'app', 'api']);
  auth = { authorization: `Basic ${Buffer.from(`${h.project.api_key}:${h.project.secret_key}`).toString('base64')}` };
  const events = [
    { event_type: 'Play', user_id: 'user-0001', time: at(2, 10), country: 'Germany' },
    { event_type: 'Buy', user_id: 'user-0001', time: at(2, 12) },
    { event_type: 'Play', user_id: 'user-0002', time: at(2, 23), country: 'France' },
    { event_type: 'Play', user_id: 'user-0002', time: at(3, 9), country: 'France' },
    // Nov 5, outside the range of the other tests.
    { event_type: 'Tagged', user_id: 'user-0003', time: at(5, 10), event_properties: { tags: ['a', 'b'] } },
    { event_type: 'Tagged', user_id: 'user-0003', time: at(5, 11), event_properties: { tags: ['c'] } },
    { event_type: 'Tagged', user_id: 'user-0003', time: at(5, 11, 30), event_properties: { tags: 'b' } },
    { event_type: 'Grid', user_id: 'user-0003', time: at(5, 12), event_properties: { matrix: [['x'], ['y']], tags: [['b']] } },
  ];
  expect((await postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
  await h.server.store.flush();
});
afterAll(() => h?.close());

const get = (path: string) => send(`${h.proxied.app}${path}`, { headers: auth });
const range = 'start=20261102&end=20261103';

test('every operation answers from the stored events', async () => {
  const users = await get(`/api/2/users?${range}`);
  expect(users.status).toBe(200);
  expect(users.body.data).toMatchObject({ xValues: ['2026-11-02', '2026-11-03'], series: [[2, 1]] });
  const segmentation = await get(`/api/2/events/segmentation?${range}&e=${json({ event_type: 'Play', group_by: [{ type: 'user', value: 'country' }] })}`);
  expect(segmentation.body.data.series).toEqual([
    [1, 1],
    [1, 0],
  ]);
  const funnel = await get(`/api/2/funnels?${range}&e=${json({ event_type: 'Play' })}&e=${json({ event_type: 'Buy' })}`);
  expect(funnel.body.data[0]).toMatchObject({ events: ['Play', 'Buy'], cumulativeRaw: [2, 1], medianTransTimes: [7_200_000, 7_200_000] });
  expect(funnel.body.data[0].dayFunnels).toMatchObject({ xValues: ['2026-11-02', '2026-11-03'], formattedXValues: ['Nov 02', 'Nov 03'] });
  // user-0001's latest active event (Buy) has no country.
  expect((await get(`/api/2/composition?${range}&p=country`)).body.data).toMatchObject({ xValues: ['(none)', 'France'], series: [[1, 1]] });
  expect((await get('/api/2/events/list')).status).toBe(200);
  for (const path of ['/api/2/sessions/length', '/api/2/sessions/average', '/api/2/sessions/peruser']) expect((await get(`${path}?${range}`)).status).toBe(200);
});

test('five reporting requests at once on one project are each answered, as the limit of 5 at a time documents', async () => {
  const paths = [
    `/api/2/users?${range}`,
    `/api/2/sessions/length?${range}&timeHistogramConfigBinTimeUnit=hours`,
    `/api/2/composition?${range}&p=country`,
    `/api/2/funnels?${range}&e=${json({ event_type: 'Play' })}&e=${json({ event_type: 'Buy' })}`,
    `/api/2/events/segmentation?${range}&e=${json({ event_type: 'Play' })}`,
  ];
  for (let round = 0; round < 4; round++) {
    const answers = await Promise.all(paths.map((path) => get(path)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // Five identical ones too.
    const same = await Promise.all(paths.map(() => get(paths[0]!)));
    expect(same.map((a) => a.body.data.series)).toEqual(paths.map(() => [[2, 1]]));
  }
});

test('users over a range without users: one series of zeros, 0 over the range', async () => {
  const answer = await get('/api/2/users?start=20261110&end=20261111');
  expect(answer.status).toBe(200);
  expect(answer.body.data).toMatchObject({ series: [[0, 0]], seriesCollapsed: [[0]], xValues: ['2026-11-10', '2026-11-11'] });
});

test('users grouped by a property over a range without users: no group, so no series, as the spec says', async () => {
  const answer = await get('/api/2/users?start=20261110&end=20261111&g=country');
  expect(answer.status).toBe(200);
  expect(answer.body.data).toEqual({ series: [], seriesCollapsed: [], seriesLabels: [], seriesMeta: [], xValues: ['2026-11-10', '2026-11-11'] });
});

test('rolling windows and averages reach back at most the interval\'s longest range: longer ones are 400, never a runaway', async () => {
  const play = json({ event_type: 'Play' });
  for (const query of ['rollingWindow=366', 'rollingAverage=366', 'i=-3600000&rollingWindow=169', 'rollingWindow=1000000', 'i=-300000&rollingWindow=9223372036854775808']) {
    const answer = await get(`/api/2/events/segmentation?${range}&e=${play}&${query}`);
    expect(answer.status, query).toBe(400);
  }
  const longest = await get(`/api/2/events/segmentation?${range}&e=${play}&m=totals&rollingWindow=365`);
  expect(longest.body.data.series).toEqual([[2, 3]]);
  expect((await get(`/api/2/events/segmentation?${range}&e=${play}&m=totals&rollingAverage=365`)).body.data.series).toEqual([[2 / 365, 3 / 365]]);
});

test('buckets follow the project time zone', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'Europe/Berlin');
  try {
    // user-0002's 23:00 UTC Play on Nov 2 is on Nov 3 in Berlin.
    expect((await get(`/api/2/events/segmentation?${range}&e=${json({ event_type: 'Play' })}`)).body.data.series).toEqual([[1, 1]]);
  } finally {
    h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  }
});

test('queries the service cannot answer get 400 saying why', async () => {
  const refused = async (path: string, reason: RegExp) => {
    const answer = await get(path);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(reason);
  };
  await refused('/api/2/users?start=20261131&end=20261201', /20261131 is not a date/);
  await refused('/api/2/sessions/peruser?start=00010101&end=00010101', /query parameter start/);
  await refused('/api/2/users?start=20261105&end=20261101', /end \(20261101\) is before start/);
  await refused('/api/2/users?start=20250101&end=20261101', /at most 365/);
  await refused(`/api/2/users?${range}&g=favourite_colour`, /query parameter g/);
  await refused(`/api/2/events/segmentation?${range}&e=${json({ event_type: 'Play' })}&m=sums`, /give e a group_by/);
  await refused(`/api/2/events/segmentation?${range}&e=${json({ event_type: 'Play' })}&m=formula&formula=${encodeURIComponent('UNIQUES(Z)')}`, /takes the event A/);
});

test('a query costing more than the five-minute budget gets 429 naming the limit, with Retry-After', async () => {
  const answer = await get(`/api/2/events/segmentation?start=20251102&end=20261101&e=${json({ event_type: 'Play', group_by: [{ type: 'user', value: 'country' }, { type: 'user', value: 'platform' }] })}`);
  expect(answer.status).toBe(429);
  expect(answer.body).toMatchObject({ code: 429, exceeded_limit: 'concurrent_cost' });
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
});

test('a saved chart as CSV; an unknown chart is 404', async () => {
  const chart = saveChart(h.dataDir, h.project.app_id, { title: 'Plays', operation: 'getEventSegmentation', query: { e: { event_type: 'Play' }, start: '20261102', end: '20261103' } });
  const csv = await get(`/api/3/chart/${chart.id}/csv`);
  expect(csv.status).toBe(200);
  expect(csv.body).toEqual({ data: '"\tPlays"\r\n\r\n"\tGet event segmentation data"\r\n\r\n"\tSegment","\t2026-11-02","\t2026-11-03"\r\n"\tAll users","2","1"\r\n' });
  expect((await get('/api/3/chart/missing/csv')).status).toBe(404);
});

test('the typed client: a segmentation and a funnel, parameters passed as objects', async () => {
  const app = createAppClient({ apiKey: h.project.api_key, secretKey: h.project.secret_key, baseUrl: h.proxied.app });
  const segmentation = await app.GET('/api/2/events/segmentation', { params: { query: { e: { event_type: 'Play' }, start: '20261102', end: '20261103', m: 'totals' } } });
  expect(segmentation.data?.data.series).toEqual([[2, 1]]);
  const funnel = await app.GET('/api/2/funnels', { params: { query: { e: [{ event_type: 'Play' }, { event_type: 'Buy' }], start: '20261102', end: '20261103' } } });
  expect(funnel.data?.data[0]?.cumulativeRaw).toEqual([2, 1]);
});

test('"set is" is set equality (a scalar is a one-element set) on both engines (events of other types with nested arrays under the key do not matter); on arrays of arrays or objects ClickHouse answers 400 with the reason, never a wrong answer', async () => {
  const setIs = (eventType: string, key: string, values: string[], op = 'set is') =>
    get(`/api/2/events/segmentation?start=20261105&end=20261105&m=totals&e=${json({ event_type: eventType, filters: [{ subprop_type: 'event', subprop_key: key, subprop_op: op, subprop_value: values }] })}`);
  // Tagged's tags: ['a', 'b'], ['c'], 'b'.
  expect((await setIs('Tagged', 'tags', ['b', 'a'])).body).toMatchObject({ data: { series: [[1]] } });
  expect((await setIs('Tagged', 'tags', ['b'])).body).toMatchObject({ data: { series: [[1]] } });
  expect((await setIs('Tagged', 'tags', ['b'], 'set is not')).body).toMatchObject({ data: { series: [[2]] } });
  const nested = await setIs('Grid', 'matrix', ['x']);
  if (process.env.SVC_TEST_ENGINE === 'clickhouse') {
    expect(nested).toMatchObject({ status: 400, body: { code: 400, error: 'Not supported on the ClickHouse engine: set operators on arrays that hold arrays or objects' } });
  } else {
    expect(nested.status).toBe(200);
  }
});

test('a user mapped into another is one new user, new on the first event of either', async () => {
  const events = [
    { event_type: 'Open', user_id: 'user-phone', time: at(7, 10) },
    { event_type: 'Open', user_id: 'user-laptop', time: at(8, 10) },
    { event_type: 'Open', user_id: 'user-phone', time: at(9, 10) },
    { event_type: 'Open', user_id: 'user-laptop', time: at(9, 11) },
  ];
  expect((await postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
  await h.server.store.flush();
  const mapping = { user_id: 'user-phone', global_user_id: 'user-laptop' };
  expect((await postJson(`${h.proxied.api}/usermap`, { api_key: h.project.api_key, mapping })).status).toBe(200);
  const newUsers = await get('/api/2/users?start=20261107&end=20261109&m=new');
  expect(newUsers.body.data).toMatchObject({ series: [[1, 0, 0]], seriesCollapsed: [[1]] });
});

test('hourly on the days clocks change (New York): the repeated hour is one bucket holding both, the skipped hour is there with 0, nothing lost', async () => {
  const play = (user: number, time: number) => ({ event_type: 'Play', user_id: `user-dst-${user}`, time });
  const events = [
    // 2026-11-01: 01:10, 01:20, 01:30 EDT, then 01:10, 01:20 EST (the clock went back at 02:00 EDT).
    ...[[5, 10], [5, 20], [5, 30], [6, 10], [6, 20]].map(([hour, minute], i) => play(i, Date.UTC(2026, 10, 1, hour!, minute))),
    // 2026-03-08: 01:30 EST, then 03:30 and 03:45 EDT (the clock went forward at 02:00 EST).
    ...[[6, 30], [7, 30], [7, 45]].map(([hour, minute], i) => play(i, Date.UTC(2026, 2, 8, hour!, minute))),
  ];
  expect((await postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
  await h.server.store.flush();
  h.server.tenancy.setTimeZone(h.project.app_id, 'America/New_York');
  try {
    const hourly = async (day: string, extra = '') => (await get(`/api/2/events/segmentation?start=${day}&end=${day}&i=-3600000&e=${json({ event_type: 'Play' })}${extra}`)).body.data;
    const hours = (values: Record<number, number>) => Array.from({ length: 24 }, (_, hour) => values[hour] ?? 0);
    const back = await hourly('20261101', '&m=totals');
    expect(back.xValues).toHaveLength(24);
    expect(back.xValues[1]).toBe('2026-11-01T01:00:00');
    expect(back.series).toEqual([hours({ 1: 5 })]);
    expect((await hourly('20261101', '&n=active')).series).toEqual([hours({ 1: 5 })]);
    expect((await hourly('20261101', '&m=totals&rollingWindow=2')).series).toEqual([hours({ 1: 5, 2: 5 })]);
    const forward = await hourly('20260308', '&m=totals');
    expect(forward.xValues[2]).toBe('2026-03-08T02:00:00');
    expect(forward.series).toEqual([hours({ 1: 1, 3: 2 })]);
    expect((await hourly('20260308', '&m=totals&rollingWindow=2')).series).toEqual([hours({ 1: 1, 2: 1, 3: 2, 4: 2 })]);
  } finally {
    h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  }
});

test('custom session-length bins: more than 100, or bounds no bin size separates, are 400 (5e-324 built bins until the heap gave out)', async () => {
  for (const bins of ['timeHistogramConfigBinMin=0&timeHistogramConfigBinMax=5e-324', 'timeHistogramConfigBinMin=0&timeHistogramConfigBinMax=60&timeHistogramConfigBinSize=0.5']) {
    const answer = await get(`/api/2/sessions/length?${range}&timeHistogramConfigBinTimeUnit=seconds&${bins}`);
    expect(answer.status, bins).toBe(400);
    expect(answer.body.error).toMatch(/at most 100/);
  }
  expect((await get(`/api/2/sessions/length?${range}&timeHistogramConfigBinTimeUnit=seconds&timeHistogramConfigBinMin=0&timeHistogramConfigBinMax=100&timeHistogramConfigBinSize=1`)).body.data.xValues).toHaveLength(100);
});

test('session-length bins are start-inclusive, end-exclusive: a session as long as the last bin ends is in none, unless it reaches the one-day cap', async () => {
  const session = (user: string, start: number, lengthMs: number) =>
    [start, start + lengthMs].map((time) => ({ event_type: 'Play', user_id: user, time, session_id: start }));
  const events = [...session('user-s1', at(12, 10), 60_000), ...session('user-s2', at(12, 11), 120_000), ...session('user-s3', at(12, 0), 25 * 3_600_000)];
  expect((await postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
  await h.server.store.flush();
  const lengths = async (bins = '') => (await get(`/api/2/sessions/length?start=20261112&end=20261112${bins}`)).body.data;
  expect(await lengths('&timeHistogramConfigBinMin=0&timeHistogramConfigBinMax=2&timeHistogramConfigBinSize=1&timeHistogramConfigBinTimeUnit=minutes')).toEqual({ xValues: ['0s-60s', '60s-120s'], series: [[0, 1]] });
  expect((await lengths()).series).toEqual([[0, 0, 0, 0, 2, 0, 0, 0, 1]]);
  // An edge below the normal range of doubles is a literal ClickHouse 18.16 cannot parse.
  expect(await lengths('&timeHistogramConfigBinMin=1e-320&timeHistogramConfigBinMax=2&timeHistogramConfigBinSize=1&timeHistogramConfigBinTimeUnit=minutes')).toEqual({ xValues: ['0s-60s', '60s-120s'], series: [[0, 1]] });
});

test('a histogram of values below the normal range of doubles has its ten bins, on both engines', async () => {
  const events = [0, 1e-310, 5e-311].map((weight, i) => ({ event_type: 'Weigh', user_id: `user-w${i}`, time: at(14, 10), event_properties: { weight } }));
  expect((await postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
  await h.server.store.flush();
  const answer = await get(`/api/2/events/segmentation?start=20261114&end=20261114&m=histogram&e=${json({ event_type: 'Weigh', group_by: [{ type: 'event', value: 'weight' }] })}`);
  expect(answer.status).toBe(200);
  expect(answer.body.data.series).toEqual([[1, 0, 0, 0, 0, 1, 0, 0, 0, 1]]);
});
