// The same seeded events in DuckDB and in ClickHouse 18.16 (Debian's, started for this file
// on loopback): the events read back alike, and segmentation-style scans printed by each
// engine's dialect (uniques and totals per bucket of one event type, grouped by an event or
// built-in property, with conditions, in several time zones and intervals) answer alike.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ClickHouseServer } from '../../../../../scripts/clickhouse/start.mjs';
import { ClickHouseDialect } from '../../../src/store/clickhouse/dialect.js';
import type { Dialect } from '../../../src/store/dialect.js';
import { DuckDbDialect } from '../../../src/store/duckdb/dialect.js';
import type { EventScan, PropertyRef } from '../../../src/model/query.js';
import { bucketLabels, type Interval, reportRange } from '../../../src/model/time.js';
import { ClickHouseEvents, migrations } from '../../../src/store/clickhouse/events.js';
import type { ClickHouseEngine } from '../../../src/store/clickhouse/engine.js';
import type { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { generateEvents, type UploadEvent } from '../../reporting/dataset.js';
import { type Engines, loadEngines, stored } from './engines.js';

const APP = 7;
const START = Date.UTC(2026, 1, 20);
const DAY = 86_400_000;
// 40 days from Feb 20: New York (Mar 8) and Berlin (Mar 29) change to summer time inside.
const DAYS: [string, string] = ['20260220', '20260331'];

let engines: Engines;
let clickhouse: ClickHouseServer;
let ch: ClickHouseEngine;
let duck: DuckDbEngine;
let uploads: UploadEvent[];

/** Events whose property names and values need escaping, and a nested key of a top-level name. */
const EDGE_EVENTS: UploadEvent[] = [
  { event_type: 'Edge', user_id: 'edge-1', time: START + 3_600_000, event_properties: { 'a"b': 'q"uote', 'back\\slash': 'x\\y', plain: "it's\nnew\tline", unicode: 'héllo 世界 😀' } },
  { event_type: 'Edge', user_id: 'edge-2', time: START + 7_200_000, event_properties: { plain: '', empty: {}, list: [1, 'two', null], number: 1.25, yes: true, nothing: null } },
  { event_type: 'Nested', user_id: 'edge-3', time: START + 7_200_000, event_properties: { outer: { plain: 'inner' }, plain: 'top' } },
  // Values at the edges of their types, and floats that 18.16's text parser reads 1 ulp off.
  { event_type: 'Edge', user_id: 'edge-4', time: START + 9_000_000, session_id: -1, price: 1.68, quantity: -2147483648, revenue: 0.1 + 0.2, event_properties: { big: Number.MAX_SAFE_INTEGER } },
  { event_type: 'Edge', device_id: 'édge-5 😀', time: START + 9_000_001, price: 7.69, quantity: 2147483647, revenue: -1e-300, event_properties: { tiny: 5e-324 } },
];

beforeAll(async () => {
  uploads = [...generateEvents({ users: 400, startMs: START, days: 40 }), ...EDGE_EVENTS];
  const events = uploads.map((upload, i) => ({ ...stored(upload, i, APP, START + 50 * DAY), event_id: upload.user_id === 'edge-4' ? Number.MAX_SAFE_INTEGER : null }));
  engines = await loadEngines(events, 'agreement');
  ({ clickhouse, ch, duck } = engines);
}, 120_000);

afterAll(async () => {
  await engines?.close();
});

test('the schema is created once and recorded', async () => {
  const again = await ClickHouseEvents.open({ url: clickhouse.url, database: 'agreement' });
  expect(await again.schemaVersion()).toBe(migrations((table) => table).length);
  expect(await again.query("SELECT count() AS n FROM schema_versions")).toEqual([{ n: migrations((table) => table).length }]);
  await again.close();
});

test('the events read back as DuckDB reads them, in ingestion order', async () => {
  const expected = await duck.events(APP);
  expect(expected.length).toBe(uploads.length);
  expect(expected.length).toBeGreaterThan(3000);
  expect(await ch.events(APP)).toEqual(expected);
  expect(await ch.events(APP + 1)).toEqual([]);
});

type Row = Record<string, unknown>;
const sorted = (rows: Row[]) => rows.map((row) => JSON.stringify(row)).sort();

interface Case {
  name: string;
  scan: Omit<EventScan, 'appId' | 'range' | 'segment'> & Partial<Pick<EventScan, 'segment'>> & { days?: [string, string] };
  measure: 'uniques' | 'totals';
}

const event = (name: string): PropertyRef => ({ kind: 'event', name });
const CASES: Case[] = [
  { name: 'uniques per day of one event type', measure: 'uniques', scan: { timeZone: 'UTC', interval: 'day', selector: { eventType: 'View Item', conditions: [] }, properties: [] } },
  { name: 'uniques per day by an event property', measure: 'uniques', scan: { timeZone: 'UTC', interval: 'day', selector: { eventType: 'Search', conditions: [] }, properties: [event('category')] } },
  { name: 'totals per day by a property of numbers and strings (New York)', measure: 'totals', scan: { timeZone: 'America/New_York', interval: 'day', selector: { eventType: 'Open App', conditions: [] }, properties: [event('count')] } },
  { name: 'uniques per day by an array property (Kolkata)', measure: 'uniques', scan: { timeZone: 'Asia/Kolkata', interval: 'day', selector: { eventType: 'Share', conditions: [] }, properties: [event('labels')] } },
  { name: 'uniques per hour by country (Berlin, across the change to summer time)', measure: 'uniques', scan: { timeZone: 'Europe/Berlin', interval: 'hour', days: ['20260328', '20260330'], selector: { eventType: '_active', conditions: [] }, properties: [{ kind: 'builtIn', name: 'country' }] } },
  { name: 'uniques per 5 minutes (Kolkata)', measure: 'uniques', scan: { timeZone: 'Asia/Kolkata', interval: 'minute5', days: ['20260225', '20260225'], selector: { eventType: '_all', conditions: [] }, properties: [] } },
  { name: 'active uniques per week by os (New York)', measure: 'uniques', scan: { timeZone: 'America/New_York', interval: 'week', selector: { eventType: '_active', conditions: [] }, properties: [{ kind: 'builtIn', name: 'os' }, { kind: 'builtIn', name: 'device_type' }] } },
  { name: 'totals per month of revenue events', measure: 'totals', scan: { timeZone: 'Europe/Berlin', interval: 'month', selector: { eventType: 'revenue_amount', conditions: [] }, properties: [] } },
  {
    name: 'uniques per day with conditions (is, is not with none, greater, contains)',
    measure: 'uniques',
    scan: {
      timeZone: 'UTC',
      interval: 'day',
      selector: { eventType: 'View Item', conditions: [{ property: event('category'), op: 'is', values: ['shoes', '(none)'] }] },
      segment: [
        { property: { kind: 'builtIn', name: 'country' }, op: 'is not', values: ['Germany'] },
        { property: { kind: 'builtIn', name: 'os' }, op: 'contains', values: ['droid', 'Chr'] },
      ],
      properties: [],
    },
  },
  { name: 'totals per day with a numeric condition', measure: 'totals', scan: { timeZone: 'UTC', interval: 'day', selector: { eventType: '_all', conditions: [{ property: event('count'), op: 'greater', values: ['4'] }] }, properties: [event('count')] } },
  // 18.16 refuses literals below the normal range; stored 5e-324 reads as 0 there, 1e-320 exactly.
  { name: 'totals per day with conditions on numbers below the normal range', measure: 'totals', scan: { timeZone: 'UTC', interval: 'day', selector: { eventType: 'Edge', conditions: [{ property: event('tiny'), op: 'less or equal', values: ['1e-320'] }, { property: event('tiny'), op: 'greater or equal', values: ['-5e-324'] }] }, properties: [event('tiny')] } },
  { name: 'new users per day (first events only)', measure: 'uniques', scan: { timeZone: 'UTC', interval: 'day', selector: { eventType: '_all', conditions: [] }, properties: [], firstEventsOnly: true } },
  { name: 'flags of funnel steps, flagged events only', measure: 'totals', scan: { timeZone: 'UTC', interval: 'day', flags: [{ eventType: 'A', conditions: [] }, { eventType: 'C', conditions: [] }], flaggedOnly: true, properties: [] } },
  { name: 'escaped names and values', measure: 'totals', scan: { timeZone: 'UTC', interval: 'day', selector: { eventType: 'Edge', conditions: [] }, properties: ['a"b', 'back\\slash', 'plain', 'unicode', 'empty', 'list', 'number', 'yes', 'nothing', 'missing'].map(event) } },
];

const scanOf = ({ scan: { days = DAYS, ...scan } }: Case): EventScan => ({ appId: APP, range: reportRange(scan.timeZone, ...days), segment: [], ...scan });

/** The segmentation-style aggregate over a scan, printed through the dialect. */
function aggregate(dialect: Dialect, c: Case): string {
  const scan = scanOf(c);
  const groups = scan.properties.map((_, i) => `p${i}`);
  const flags = (scan.flags ?? []).map((_, i) => `sum(CASE WHEN f${i} THEN 1 ELSE 0 END) AS f${i}`);
  const measure = c.measure === 'uniques' ? 'count(DISTINCT svc_id)' : 'count(*)';
  return `SELECT ${dialect.bucketLabel('bucket', scan.interval as Interval)} AS label, ${[...groups, ...flags, `${measure} AS n`].join(', ')} FROM (${dialect.scan(scan)}) GROUP BY ${['bucket', ...groups].join(', ')}`;
}

describe('segmentation-style scans answer alike on DuckDB and ClickHouse', () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const expected = await duck.query(aggregate(new DuckDbDialect({ userMappings: false }), c));
      const actual = await ch.query(aggregate(new ClickHouseDialect(), c));
      // Not vacuous: every case has rows, and counts.
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.some((row) => (row.n as number) > 0)).toBe(true);
      expect(sorted(actual)).toEqual(sorted(expected));
      const scan = scanOf(c);
      const labels = new Set(bucketLabels(scan.range, scan.interval!));
      expect(actual.filter((row) => !labels.has(row.label as string))).toEqual([]);
    });
  }
});

test('a property scan sees a difference between events (the comparison can fail)', async () => {
  const c = CASES[1]!;
  const rows = await ch.query(aggregate(new ClickHouseDialect(), c));
  expect(new Set(rows.map((row) => row.p0)).size).toBeGreaterThan(2);
  const other = await ch.query(aggregate(new ClickHouseDialect(), { ...c, scan: { ...c.scan, selector: { eventType: 'Share', conditions: [] } } }));
  expect(sorted(other)).not.toEqual(sorted(rows));
});

test('bucketOf names the bucket of a label', async () => {
  const dialect = new ClickHouseDialect();
  const scan = dialect.scan({ appId: APP, timeZone: 'America/New_York', range: reportRange('America/New_York', ...DAYS), segment: [], properties: [], interval: 'day', selector: { eventType: 'View Item', conditions: [] } });
  const [day] = await ch.query(`SELECT ${dialect.bucketLabel('bucket', 'day')} AS label, count(*) AS n FROM (${scan}) WHERE bucket = ${dialect.bucketOf('2026-03-09')} GROUP BY bucket`);
  expect(day?.label).toBe('2026-03-09');
  const hourly = new ClickHouseDialect();
  const [hour] = await ch.query(`SELECT ${hourly.bucketLabel(hourly.bucketOf('2026-03-09T05:30:00'), 'hour')} AS label`);
  expect(hour?.label).toBe('2026-03-09T05:30:00');
});

test('event types and properties seen agree', async () => {
  const duckDialect = new DuckDbDialect({ userMappings: false });
  const chDialect = new ClickHouseDialect();
  const types = async (engine: { query(sql: string): Promise<Row[]> }, dialect: Dialect) => (await engine.query(dialect.eventTypes(APP))).map((r) => r.event_type).sort();
  expect(await types(ch, chDialect)).toEqual(await types(duck, duckDialect));
  for (const [property, eventTypes] of [['category', null], ['category', ['Purchase']], ['step_index', ['A']], ['a"b', null], ['nothing', ['Edge']], ['missing', null]] as const) {
    const seen = async (engine: { query(sql: string): Promise<Row[]> }, dialect: Dialect) => (await engine.query(dialect.eventPropertySeen(APP, property, eventTypes))).length;
    expect(await seen(ch, chDialect), property).toBe(await seen(duck, duckDialect));
  }
});

test('a property is a top-level key, not a nested object\'s key of the same name', async () => {
  const c: Case = { name: 'nested', measure: 'totals', scan: { timeZone: 'UTC', interval: 'day', selector: { eventType: 'Nested', conditions: [] }, properties: [event('plain')] } };
  expect((await duck.query(aggregate(new DuckDbDialect({ userMappings: false }), c)))[0]?.p0).toBe('top');
  expect((await ch.query(aggregate(new ClickHouseDialect(), c)))[0]?.p0).toBe('top');
});
