// `/api/3/chart/{chart_id}/query`: a saved chart's results are its operation's answer to its
// saved query. Checked against that operation asked directly and against the oracle
// (oracle.ts) computed from the uploaded events, in a zone whose days are not UTC's; a chart
// saved without a range covers the last 30 days. Then unknown charts and other projects'
// (404), IDs that are not IDs (400), a saved query its operation refuses (400), the
// credentials (401) and the chart's cost against the limits (429). Every answer goes
// through the Prism proxy (checked against the spec).
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { saveChart } from '../../src/reporting/charts.js';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';
import { createRandom, type UploadEvent } from './dataset.js';
import * as oracle from './oracle.js';

const DAY = 86_400_000;
const FIRST_DAY = Date.UTC(2026, 9, 15);
// Friday 2026-11-20, noon UTC: a chart without a range covers Oct 22 to Nov 20 in Los Angeles.
const NOW = Date.UTC(2026, 10, 20, 12);
const TIME_ZONE = 'America/Los_Angeles';

/** 30 users over five weeks: Plays, some Buys a few minutes later, a country each. */
function generate(seed: number): UploadEvent[] {
  const random = createRandom(seed);
  const countries = ['Germany', 'Japan', 'United States'];
  const events: UploadEvent[] = [];
  for (let k = 0; k < 30; k++) {
    const country = countries[k % 3];
    for (let day = Math.floor(random() * 10); day < 37; day += 1 + Math.floor(random() * 4)) {
      const at = FIRST_DAY + day * DAY + Math.floor(random() * DAY);
      events.push({ event_type: 'Play', user_id: `user-${k}`, time: at, country });
      if (random() < 0.1) events.push({ event_type: 'Buy', user_id: `user-${k}`, time: at + 600_000, country });
    }
  }
  return events.sort((a, b) => a.time - b.time);
}

let h: Harness;
/** The server's clock: NOW, moved on by a cost window before each test (the charts' costs count against 1000 per five minutes). */
let now = NOW;
const uploads = generate(5);
const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
let auth: Record<string, string>;
let o: oracle.Oracle;

beforeAll(async () => {
  h = await startHarness(['ingest', 'app'], { clock: () => now });
  h.server.tenancy.setTimeZone(h.project.app_id, TIME_ZONE);
  auth = basic(h.project.api_key, h.project.secret_key);
  expect((await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events: uploads })).status).toBe(200);
  // The other project: one user, who must not show in this project's charts.
  expect((await postJson(`${h.direct}/batch`, { api_key: h.otherProject.api_key, events: [{ event_type: 'Play', user_id: 'user-1', time: NOW - DAY }] })).status).toBe(200);
  await h.server.store.flush();
  o = oracle.createOracle(uploads, TIME_ZONE);
}, 120_000);
afterAll(() => h?.close());
beforeEach(() => {
  now += 5 * 60_000 + 1000;
});

const get = (path: string, headers = auth) => send(`${h.proxied.app}${path}`, { headers });
const queryOf = (params: Record<string, unknown>) =>
  Object.entries(params)
    .flatMap(([name, value]) => (Array.isArray(value) && name === 'e' ? value : [value]).map((item) => `${name}=${encodeURIComponent(typeof item === 'object' ? JSON.stringify(item) : String(item))}`))
    .join('&');
const NOVEMBER = { start: '20261101', end: '20261110' };

test.each([
  ['a segmentation by country', 'getEventSegmentation', '/api/2/events/segmentation', { ...NOVEMBER, e: { event_type: 'Play', group_by: [{ type: 'user', value: 'country' }] } }],
  ['a funnel', 'getFunnel', '/api/2/funnels', { ...NOVEMBER, e: [{ event_type: 'Play' }, { event_type: 'Buy' }] }],
  ['weekly active users', 'getUserCounts', '/api/2/users', { ...NOVEMBER, m: 'active', i: 7 }],
  ['average session length', 'getAverageSessionLength', '/api/2/sessions/average', NOVEMBER],
  ['a retention by country', 'getRetention', '/api/2/retention', { ...NOVEMBER, se: { event_type: 'Play' }, re: { event_type: 'Buy' }, g: 'country' }],
  ['revenue LTV', 'getRevenueLtv', '/api/2/revenue/ltv', { ...NOVEMBER, m: 0 }],
  ['real-time active users', 'getRealtimeActiveUsers', '/api/2/realtime', { i: 5 }],
] as const)('%s: what its operation answers to the saved query', async (_, operation, path, query) => {
  const chart = saveChart(h.dataDir, h.project.app_id, { title: 'A chart', operation, query: { ...query } });
  const results = await get(`/api/3/chart/${chart.id}/query`);
  expect(results.status, JSON.stringify(results.body)).toBe(200);
  const direct = await get(`${path}?${queryOf(query)}`);
  expect(direct.status).toBe(200);
  expect(results.body).toEqual(direct.body);
});

test('the results agree with the events: a segmentation by country, a funnel, daily active users', async () => {
  const e = { event_type: 'Play', group_by: [{ type: 'user' as const, value: 'country' }] };
  const segmentation = saveChart(h.dataDir, h.project.app_id, { title: 'Plays by country', operation: 'getEventSegmentation', query: { ...NOVEMBER, e } });
  expect((await get(`/api/3/chart/${segmentation.id}/query`)).body.data).toMatchObject(oracle.segmentation(o, { ...NOVEMBER, e }));
  const steps = [{ event_type: 'Play' }, { event_type: 'Buy' }];
  const funnel = saveChart(h.dataDir, h.project.app_id, { title: 'Buyers', operation: 'getFunnel', query: { ...NOVEMBER, e: steps } });
  const [element] = (await get(`/api/3/chart/${funnel.id}/query`)).body.data;
  const [expected] = oracle.funnels(o, { ...NOVEMBER, e: steps });
  expect(element.cumulativeRaw).toEqual(expected!.cumulativeRaw);
  expect(element.cumulativeRaw[0]).toBeGreaterThan(element.cumulativeRaw[1]);
  expect(element.cumulativeRaw[1]).toBeGreaterThan(0);
  const users = saveChart(h.dataDir, h.project.app_id, { title: 'Users', operation: 'getUserCounts', query: { ...NOVEMBER, m: 'active' } });
  expect((await get(`/api/3/chart/${users.id}/query`)).body.data).toEqual(oracle.users(o, { ...NOVEMBER, m: 'active', i: 1 }));
});

/** A chart's CSV as rows of cells (the platform's quoting and leading TAB undone). */
async function csvRows(chartId: string): Promise<string[][]> {
  const answer = await get(`/api/3/chart/${chartId}/csv`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (answer.body.data as string)
    .split('\r\n')
    .filter((line) => line !== '')
    .map((line) => line.slice(1, -1).split('","').map((cell) => cell.replace(/^\t/, '')));
}

test('retention, revenue LTV and real-time charts as CSV: a row per cohort (or day), the numbers of their results', async () => {
  const retention = saveChart(h.dataDir, h.project.app_id, { title: 'Returning buyers', operation: 'getRetention', query: { ...NOVEMBER, se: { event_type: 'Play' }, re: { event_type: 'Play' } } });
  const retained = (await get(`/api/3/chart/${retention.id}/query`)).body.data.series[0];
  const retentionRows = await csvRows(retention.id);
  const periods = Math.max(...retained.dates.map((date: string) => retained.values[date].length));
  expect(periods).toBeGreaterThan(1);
  expect(retentionRows[2]).toEqual(['Cohort', ...Array.from({ length: periods }, (_, n) => `Period ${n}`)]);
  const dataRows = retentionRows.slice(3);
  expect(dataRows.map((row) => row[0])).toEqual(retained.dates);
  for (const row of dataRows) expect(row.slice(1, 1 + retained.values[row[0]!].length).map(Number)).toEqual(retained.values[row[0]!].map((c: { count: number }) => c.count));
  expect(Number(dataRows.at(-1)![1])).toBeGreaterThan(0);

  const ltv = saveChart(h.dataDir, h.project.app_id, { title: 'LTV', operation: 'getRevenueLtv', query: { ...NOVEMBER, m: 3 } });
  const cohorts = (await get(`/api/3/chart/${ltv.id}/query`)).body.data.series[0];
  const ltvRows = await csvRows(ltv.id);
  expect(ltvRows[2]).toEqual(['Cohort', 'count', 'paid', 'total_amount', 'r1d', 'r2d', 'r3d', 'r4d', 'r5d', 'r6d', 'r7d', 'r14d', 'r30d', 'r60d', 'r90d']);
  const newest = ltvRows[3]!;
  expect(newest[0]).toBe(cohorts.dates[0]);
  expect(newest.slice(1, 4).map(Number)).toEqual([cohorts.values[cohorts.dates[0]].count, cohorts.values[cohorts.dates[0]].paid, cohorts.values[cohorts.dates[0]].total_amount]);
  // Windows not reached yet are empty cells (r90d of a November cohort on Nov 20).
  expect(newest.at(-1)).toBe('');

  const realtime = saveChart(h.dataDir, h.project.app_id, { title: 'Now', operation: 'getRealtimeActiveUsers', query: {} });
  const now = (await get(`/api/3/chart/${realtime.id}/query`)).body.data;
  const realtimeRows = await csvRows(realtime.id);
  expect(realtimeRows[2]).toEqual(['Segment', ...now.xValues]);
  expect(realtimeRows.slice(3).map((row) => row[0])).toEqual(now.seriesLabels);
  expect(realtimeRows.slice(3).map((row) => row.slice(1).map(Number))).toEqual(now.series);
});

test('a chart saved without a range covers the last 30 days, in the project time zone', async () => {
  const chart = saveChart(h.dataDir, h.project.app_id, { title: 'Users lately', operation: 'getUserCounts', query: { m: 'active' } });
  const { data } = (await get(`/api/3/chart/${chart.id}/query`)).body;
  expect(data.xValues[0]).toBe('2026-10-22');
  expect(data.xValues.at(-1)).toBe('2026-11-20');
  expect(data).toEqual(oracle.users(o, { start: '20261022', end: '20261120', m: 'active', i: 1 }));
});

test('an unknown chart, or one of another project, is 404; an ID beyond any integer too; one that is not an ID is 400', async () => {
  const theirs = saveChart(h.dataDir, h.otherProject.app_id, { title: 'Theirs', operation: 'getUserCounts', query: { start: '20261119', end: '20261119', m: 'active' } });
  const mine = await get(`/api/3/chart/${theirs.id}/query`);
  expect(mine.status).toBe(404);
  expect(mine.body).toEqual({ code: 404, error: `No saved chart ${theirs.id} in this project` });
  const own = await get(`/api/3/chart/${theirs.id}/query`, basic(h.otherProject.api_key, h.otherProject.secret_key));
  expect(own.status).toBe(200);
  // Their one user, on Nov 19.
  expect(own.body.data.series).toEqual([[1]]);
  expect(oracle.users(o, { start: '20261119', end: '20261119', m: 'active', i: 1 }).series[0]![0]).toBeGreaterThan(1);
  for (const id of ['missing', '99999999999999999999999999', '-1', '0']) expect((await get(`/api/3/chart/${id}/query`)).status, id).toBe(404);
  // As the spec's example.
  expect((await get('/api/3/chart/a.b/query')).body).toEqual({ code: 400, error: 'Invalid request: path parameter chart_id: / must match pattern "^[A-Za-z0-9_-]+$" {"pattern":"^[A-Za-z0-9_-]+$"}' });
  for (const id of ['a.b', 'a%20b', '%E2%82%AC', "x'--"]) {
    const answer = await get(`/api/3/chart/${id}/query`);
    expect(answer.status, id).toBe(400);
    expect(answer.body).toMatchObject({ code: 400, error: expect.stringMatching(/chart_id/) });
  }
});

test('a saved query that its operation refuses is 400 saying why', async () => {
  const chart = saveChart(h.dataDir, h.project.app_id, { title: 'Broken', operation: 'getEventSegmentation', query: { e: { event_type: 'Play' }, start: '2026-11-01', end: '20261110' } });
  const answer = await get(`/api/3/chart/${chart.id}/query`);
  expect(answer.status).toBe(400);
  expect(answer.body.error).toMatch(new RegExp(`saved query of chart ${chart.id} is invalid: .*start`));
  const sums = saveChart(h.dataDir, h.project.app_id, { title: 'Sums of nothing', operation: 'getEventSegmentation', query: { ...NOVEMBER, e: { event_type: 'Play' }, m: 'sums' } });
  const refused = await get(`/api/3/chart/${sums.id}/query`);
  expect(refused.status).toBe(400);
  expect(refused.body.error).toMatch(/give e a group_by/);
});

test('without credentials or with a wrong secret key: 401', async () => {
  const chart = saveChart(h.dataDir, h.project.app_id, { title: 'Users', operation: 'getUserCounts', query: NOVEMBER });
  // Without credentials Prism answers itself: to the server directly.
  expect((await send(`${h.server.urls.app}/api/3/chart/${chart.id}/query`)).status).toBe(401);
  expect((await get(`/api/3/chart/${chart.id}/query`, basic(h.project.api_key, 'not-the-secret'))).status).toBe(401);
});

test("a chart costs its query's cost: over the budget, 429 naming the cost", async () => {
  const e = { event_type: 'Play', group_by: [{ type: 'user', value: 'country' }, { type: 'user', value: 'platform' }] };
  const chart = saveChart(h.dataDir, h.project.app_id, { title: 'Expensive', operation: 'getEventSegmentation', query: { start: '20251121', end: '20261120', e } });
  const answer = await get(`/api/3/chart/${chart.id}/query`);
  expect(answer.status).toBe(429);
  expect(answer.body).toMatchObject({ code: 429, exceeded_limit: 'concurrent_cost' });
  // 365 days × (1 + 4 + 4).
  expect(answer.body.error).toMatch(/costs 3285;/);
});
