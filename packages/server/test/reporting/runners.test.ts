// The reporting runners on a small dataset sent through /batch, every answer computed by hand.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseFormula } from '../../src/reporting/formula.js';
import { DuckDbDialect } from '../../src/store/duckdb/dialect.js';
import { userProperty } from '../../src/model/query.js';
import { composition } from '../../src/reporting/runners/composition.js';
import type { RunnerContext } from '../../src/reporting/runners/context.js';
import { eventTypeTotals } from '../../src/reporting/runners/event-types.js';
import { funnel } from '../../src/reporting/runners/funnels.js';
import { segmentation } from '../../src/reporting/runners/segmentation.js';
import { DEFAULT_BINS_MS, dailySessions, sessionLengths } from '../../src/reporting/runners/sessions.js';
import { userCounts } from '../../src/reporting/runners/users.js';
import { postJson } from '../support/http.js';
import { reportRange } from '../../src/model/time.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { TEST_PRIORITY } from '../support/harness.js';

let dataDir: string;
let server: RunningServer;
let ctx: RunnerContext;
const at = (day: number, hour: number, minute = 0) => Date.UTC(2026, 10, day, hour, minute);
const range = reportRange('UTC', '20261102', '20261104');

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-runners-'));
  server = await startServer({ dataDir, host: '127.0.0.1', port: 0, ...TEST_PRIORITY });
  const project = server.tenancy.createProject(server.tenancy.createOrganization('Reports').id, 'Reports');
  const events = [
    { event_type: 'Play', user_id: 'user-0001', time: at(2, 10), session_id: at(2, 10), country: 'DE', event_properties: { genre: 'jazz', seconds: 10 } },
    { event_type: 'Play', user_id: 'user-0001', time: at(2, 10, 5), session_id: at(2, 10), country: 'DE', event_properties: { genre: 'rock' } },
    { event_type: 'Buy', user_id: 'user-0001', time: at(3, 9), price: 5 },
    { event_type: 'Play', device_id: 'device-0002', time: at(2, 11), country: 'US', event_properties: { genre: 'jazz' } },
    { event_type: '$identify', user_id: 'user-0002', device_id: 'device-0002', time: at(3, 12), user_properties: { $set: { plan: 'pro' } } },
    { event_type: 'Play', user_id: 'user-0002', time: at(3, 12, 1), event_properties: { genre: 'jazz' } },
    { event_type: 'Play', user_id: 'user-0003', time: at(4, 8), country: 'DE', event_properties: { genre: 'pop', seconds: 30 } },
    { event_type: 'Play', user_id: 'user-0004', time: at(5, 8), country: 'FR' },
  ];
  const answer = await postJson(`${server.urls.ingest}/batch`, { api_key: project.api_key, events });
  expect(answer.status).toBe(200);
  await server.store.flush();
  ctx = { appId: project.app_id, timeZone: 'UTC', dialect: new DuckDbDialect(), query: (sql) => server.store.query(sql), queryChunks: (sql) => server.store.queryChunks(sql), now: () => at(4, 15) };
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const play = { eventType: 'Play', conditions: [] };
const values = (result: { series: { groups: string[]; values: number[]; collapsed: number }[] }) => result.series.map((s) => [s.groups, s.values, s.collapsed]);

describe('users', () => {
  test('active and new users per day; the device that identified is one user', async () => {
    const base = { range, interval: 'day' as const, segment: [] };
    expect(values(await userCounts(ctx, { ...base, metric: 'active' }))).toEqual([[[], [2, 2, 1], 3]]);
    expect(values(await userCounts(ctx, { ...base, metric: 'new' }))).toEqual([[[], [2, 0, 1], 3]]);
    expect((await userCounts(ctx, { ...base, metric: 'active' })).xValues).toEqual(['2026-11-02', '2026-11-03', '2026-11-04']);
  });

  test('weekly buckets start on Monday; a segment keeps the events of matching users', async () => {
    const weekly = await userCounts(ctx, { range: reportRange('UTC', '20261101', '20261104'), interval: 'week', segment: [], metric: 'active' });
    expect(weekly.xValues).toEqual(['2026-10-26', '2026-11-02']);
    expect(values(weekly)).toEqual([[[], [0, 3], 3]]);
    const germans = await userCounts(ctx, { range, interval: 'day', metric: 'active', segment: [{ property: userProperty('country'), op: 'is', values: ['DE'] }] });
    expect(values(germans)).toEqual([[[], [1, 0, 1], 2]]);
  });
});

describe('segmentation', () => {
  test('formulas, rolling windows (users counted once per window) and rolling averages', async () => {
    const query = { range, interval: 'day' as const, events: [play], groupBy: [], segment: [], limit: 100, activeUsersOnly: false };
    expect(values(await segmentation(ctx, { ...query, metric: 'formula', formula: parseFormula('totals(A) / UNIQUES(A)') }))).toEqual([[[], [1.5, 1, 1], 5 / 3]]);
    expect(values(await segmentation(ctx, { ...query, metric: 'uniques', rollingWindow: 2 }))).toEqual([[[], [2, 2, 2], 3]]);
    expect(values(await segmentation(ctx, { ...query, metric: 'totals', rollingAverage: 2 }))).toEqual([[[], [1.5, 2, 1], 5]]);
    expect(() => parseFormula('UNIQUES(C)')).toThrow('takes the event A (e) or B (e2)');
    expect(() => parseFormula('MEDIAN(A)')).toThrow('unknown function MEDIAN');
  });

  const base = { range, interval: 'day' as const, events: [play], groupBy: [], segment: [], limit: 100, activeUsersOnly: false };
  test('uniques, totals, average and pct_dau', async () => {
    expect(values(await segmentation(ctx, { ...base, metric: 'uniques' }))).toEqual([[[], [2, 1, 1], 3]]);
    expect(values(await segmentation(ctx, { ...base, metric: 'totals' }))).toEqual([[[], [3, 1, 1], 5]]);
    expect(values(await segmentation(ctx, { ...base, metric: 'average' }))).toEqual([[[], [1.5, 1, 1], 5 / 3]]);
    expect(values(await segmentation(ctx, { ...base, metric: 'pct_dau' }))).toEqual([[[], [1, 0.5, 1], 1]]);
  });

  test('group by a built-in and a custom user property at event time; event property filters', async () => {
    const byCountry = await segmentation(ctx, { ...base, metric: 'uniques', groupBy: [userProperty('country')] });
    expect(values(byCountry)).toEqual([
      [['DE'], [1, 0, 1], 2],
      [['(none)'], [0, 1, 0], 1],
      [['US'], [1, 0, 0], 1],
    ]);
    const byPlan = await segmentation(ctx, { ...base, metric: 'uniques', groupBy: [userProperty('gp:plan')] });
    expect(values(byPlan)).toEqual([
      [['(none)'], [2, 0, 1], 3],
      [['pro'], [0, 1, 0], 1],
    ]);
    const jazz = await segmentation(ctx, { ...base, metric: 'totals', events: [{ eventType: 'Play', conditions: [{ property: { kind: 'event', name: 'genre' }, op: 'is', values: ['jazz'] }] }] });
    expect(values(jazz)).toEqual([[[], [2, 1, 0], 3]]);
    const seconds = { ...base, groupBy: [{ kind: 'event' as const, name: 'seconds' }] };
    expect(values(await segmentation(ctx, { ...seconds, metric: 'sums' }))).toEqual([[[], [10, 0, 30], 40]]);
    expect(values(await segmentation(ctx, { ...seconds, metric: 'value_avg' }))).toEqual([[[], [10, 0, 30], 20]]);
    const histogram = await segmentation(ctx, { ...seconds, metric: 'histogram' });
    expect(histogram.xValues[0]).toBe('10-12');
    expect(values(histogram)).toEqual([[[], [1, 0, 0, 0, 0, 0, 0, 0, 0, 1], 2]]);
    const notJazz = await segmentation(ctx, { ...base, metric: 'totals', events: [{ eventType: 'Play', conditions: [{ property: { kind: 'event', name: 'genre' }, op: 'is not', values: ['jazz'] }] }] });
    expect(values(notJazz)).toEqual([[[], [1, 0, 1], 2]]);
  });
});

test('sessions: lengths in the default bins, average length and sessions per user per day', async () => {
  const lengths = await sessionLengths(ctx, range, DEFAULT_BINS_MS);
  expect(lengths.xValues[4]).toBe('60s-180s');
  expect(lengths.counts).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 0]);
  expect(values(await dailySessions(ctx, range, 'averageLength'))).toEqual([[[], [300, 0, 0], 300]]);
  expect(values(await dailySessions(ctx, range, 'perUser'))).toEqual([[[], [0.5, 0, 0], 1 / 3]]);
});

test('composition by the value on each user’s latest active event', async () => {
  expect(await composition(ctx, range, userProperty('country'))).toEqual({ values: ['(none)', 'DE'], counts: [2, 1] });
});

test('event types with the totals of the current week', async () => {
  expect(await eventTypeTotals(ctx)).toEqual([
    { eventType: '$identify', totals: 1, nonActive: true },
    { eventType: 'Buy', totals: 1, nonActive: false },
    { eventType: 'Play', totals: 5, nonActive: false },
  ]);
});

describe('funnels', () => {
  const steps = (...types: string[]) => types.map((eventType) => ({ eventType, conditions: [] }));
  const base = { range, mode: 'ordered' as const, windowSeconds: 86_400, segment: [], limit: 100 };
  const reached = async (query: Partial<Parameters<typeof funnel>[1]>) => (await funnel(ctx, { ...base, steps: steps('Play', 'Buy'), ...query })).groups.map((g) => [g.groupValue, g.total.reached]);

  test('ordered within the window; transition times; per entry day', async () => {
    const result = await funnel(ctx, { ...base, steps: steps('Play', 'Buy') });
    // user-0001 plays on Nov 2 10:00 and buys Nov 3 09:00 (23 h later); three others play only.
    expect(result.groups.map((g) => [g.groupValue, g.total.reached, g.total.medianTimes, g.total.averageTimes])).toEqual([['(none)', [3, 1], [23 * 3_600_000, 23 * 3_600_000], [23 * 3_600_000, 23 * 3_600_000]]]);
    expect(result.days).toEqual(['2026-11-02', '2026-11-03', '2026-11-04']);
    expect(result.groups[0]!.byDay.map((d) => d.reached)).toEqual([
      [2, 1],
      [1, 0],
      [1, 0],
    ]);
    expect(await reached({ windowSeconds: 3_600 })).toEqual([['(none)', [3, 0]]]);
  });

  test('sequential needs the steps back to back; the group is the value on the entry event', async () => {
    expect(await reached({ steps: steps('Play', 'Play'), mode: 'sequential' })).toEqual([['(none)', [3, 1]]]);
    expect(await reached({ steps: steps('Play', 'Buy'), groupBy: userProperty('country') })).toEqual([
      ['DE', [2, 1]],
      ['US', [1, 0]],
    ]);
  });
});

test('a numeric comparison with a value that is not a number matches nothing', async () => {
  const query = { range, interval: 'day' as const, groupBy: [], segment: [], limit: 100, activeUsersOnly: false, metric: 'totals' as const };
  const events = [{ eventType: 'Play', conditions: [{ property: { kind: 'event' as const, name: 'seconds' }, op: 'greater' as const, values: ["1'; DROP TABLE events; --"] }] }];
  expect(values(await segmentation(ctx, { ...query, events }))).toEqual([[[], [0, 0, 0], 0]]);
  const pointer = [{ eventType: "it's", conditions: [{ property: { kind: 'event' as const, name: "a/b~c'" }, op: 'is' as const, values: ["x'y"] }] }];
  expect(values(await segmentation(ctx, { ...query, events: pointer }))).toEqual([[[], [0, 0, 0], 0]]);
});
