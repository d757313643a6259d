// One user's way through a funnel, each case its own project on one server: the modes, the
// furthest-then-earliest entry, entry days, same-time events. Ordered and sequential funnels
// are answered by the engine, unordered ones by funnel-paths.ts; both are held to the same cases.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DuckDbDialect } from '../../src/store/duckdb/dialect.js';
import type { PropertyRef } from '../../src/model/query.js';
import { funnel } from '../../src/reporting/runners/funnels.js';
import { type FunnelMode } from '../../src/model/funnel-times.js';
import { reportRange } from '../../src/model/time.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { TEST_PRIORITY } from '../support/harness.js';
import { postJson } from '../support/http.js';

let dataDir: string;
let server: RunningServer;
const MINUTE = 60_000;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 2, 8);
const range = reportRange('UTC', '20261102', '20261104');

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-funnels-'));
  server = await startServer({ dataDir, host: '127.0.0.1', port: 0, ...TEST_PRIORITY });
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** One user's events `[event_type, minutes after T0, event properties?]` in their own project, then the funnel of `steps`. */
async function funnelOf(events: [string, number, Record<string, unknown>?][], steps: string[], mode: FunnelMode, windowMinutes = 100, groupBy?: PropertyRef) {
  const project = server.tenancy.createProject(server.tenancy.createOrganization('Funnels').id, 'Funnels');
  const body = { api_key: project.api_key, events: events.map(([event_type, minutes, event_properties], i) => ({ event_type, user_id: 'user-0001', time: T0 + minutes * MINUTE, insert_id: `e-${i}`, event_properties })) };
  expect((await postJson(`${server.urls.ingest}/batch`, body)).status).toBe(200);
  await server.store.flush();
  const ctx = { appId: project.app_id, timeZone: 'UTC', dialect: new DuckDbDialect(), query: (sql: string) => server.store.query(sql), queryChunks: (sql: string) => server.store.queryChunks(sql), now: () => T0 + 3 * DAY };
  const result = await funnel(ctx, { range, steps: steps.map((eventType) => ({ eventType, conditions: [] })), mode, windowSeconds: windowMinutes * 60, segment: [], groupBy, limit: 100 });
  const [group] = result.groups;
  return { groupValue: group!.groupValue, reached: group!.total.reached, medianTimes: group!.total.medianTimes.map((ms) => ms / MINUTE), byDay: group!.byDay.map((day) => day.reached) };
}

test('ordered: later steps after the previous one within the window, other events between allowed', async () => {
  const events: [string, number][] = [['A', 0], ['X', 5], ['C', 10], ['B', 20], ['C', 30]];
  expect(await funnelOf(events, ['A', 'B', 'C'], 'ordered')).toMatchObject({ reached: [1, 1, 1], medianTimes: [30, 20, 10] });
  expect(await funnelOf(events, ['A', 'B', 'C'], 'ordered', 25)).toMatchObject({ reached: [1, 1, 0] });
});

test('sequential: no other event between two steps', async () => {
  expect((await funnelOf([['A', 0], ['X', 5], ['B', 10]], ['A', 'B'], 'sequential')).reached).toEqual([1, 0]);
  expect((await funnelOf([['A', 0], ['B', 10], ['C', 11]], ['A', 'B', 'C'], 'sequential')).reached).toEqual([1, 1, 1]);
});

test('unordered: every step within the window from the entry, in any order', async () => {
  expect(await funnelOf([['A', 0], ['C', 10], ['B', 20]], ['A', 'B', 'C'], 'unordered', 24 * 60)).toMatchObject({ reached: [1, 1, 1], medianTimes: [20, 20, 0] });
  expect((await funnelOf([['A', 0], ['C', 10]], ['A', 'B', 'C'], 'unordered', 24 * 60)).reached).toEqual([1, 0, 0]);
});

test.each(['ordered', 'sequential'] as const)('%s: the entry reaching furthest wins, the earliest among equals', async (mode) => {
  // The first entry times out before B; the second reaches C: its times count.
  expect(await funnelOf([['A', 0], ['A', 50], ['B', 120], ['C', 130]], ['A', 'B', 'C'], mode)).toMatchObject({ reached: [1, 1, 1], medianTimes: [80, 70, 10] });
  // Ordered: both entries reach B and the earlier one's time counts; sequential: X breaks the first.
  expect((await funnelOf([['A', 0], ['X', 5], ['A', 10], ['B', 20]], ['A', 'B'], mode)).medianTimes).toEqual(mode === 'ordered' ? [20, 20] : [10, 10]);
});

test('a user counts on each entry day, with that day’s best path, in the group of the winning entry', async () => {
  const events: [string, number][] = [['A', 0], ['A', 24 * 60 + 1], ['B', 24 * 60 + 30]];
  expect(await funnelOf(events, ['A', 'B'], 'ordered', 3 * 24 * 60)).toMatchObject({ reached: [1, 1], byDay: [[1, 1], [1, 1], [0, 0]] });
  expect(await funnelOf(events, ['A', 'B'], 'ordered', 60)).toMatchObject({ reached: [1, 1], byDay: [[1, 0], [1, 1], [0, 0]] });
});

test.each(['ordered', 'sequential'] as const)('%s: the group is the winning entry’s value, also when it has none', async (mode) => {
  // The first entry (shelf "top") times out before B; the second, without a shelf, wins.
  const events: [string, number, Record<string, unknown>?][] = [['A', 0, { shelf: 'top' }], ['A', 50], ['B', 120]];
  expect(await funnelOf(events, ['A', 'B'], mode, 100, { kind: 'event', name: 'shelf' })).toMatchObject({ groupValue: '(none)', reached: [1, 1] });
});

test('one event matching two steps counts once; events of the same time count in step order', async () => {
  expect((await funnelOf([['A', 0]], ['A', 'A'], 'ordered')).reached).toEqual([1, 0]);
  expect((await funnelOf([['B', 0], ['A', 0]], ['A', 'B'], 'ordered')).reached).toEqual([1, 1]);
  expect((await funnelOf([['B', 0], ['A', 0]], ['A', 'B'], 'sequential')).reached).toEqual([1, 1]);
  // Two of the same event at the same time are one moment: neither follows the other.
  expect((await funnelOf([['A', 0], ['A', 0]], ['A', 'A'], 'ordered')).reached).toEqual([1, 0]);
  expect((await funnelOf([['A', 0], ['A', 1]], ['A', 'A'], 'ordered')).reached).toEqual([1, 1]);
});
