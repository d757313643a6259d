// DuckDB writes the Export API's lines itself (its JSON writer, from a struct, the user's state
// at the event by an ASOF join); ClickHouse's engine writes them in JavaScript from rows and the
// histories of the range's users. Both must write the same bytes: the same keys in the same
// order and the same values, for texts that need escaping, numbers, missing values, and the
// user's properties, `paying` and `start_version` at each event.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { withUserAtEvent } from '../../../src/store/clickhouse/exported-users.js';
import { DuckDbDialect } from '../../../src/store/duckdb/dialect.js';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { DUCKDB_EXPORT_WORDS } from '../../../src/store/duckdb/export-lines.js';
import { EXPORT_FIELDS } from '../../../src/store/export-lines.js';
import { exportRowsSql, linesText, withoutExponentPlus } from '../../../src/store/exported-events.js';
import { splitText, type UserHistory, userHistories } from '../../../src/store/user-at-event.js';
import type { StoredEvent } from '../../../src/store/types.js';

let dataDir: string;
let engine: DuckDbEngine;
const T = Date.UTC(2026, 10, 20, 9, 30, 15, 7);
const RANGE = [T - 3_600_000, T + 3_600_000] as const;
/** Every event's ingest_seq: the profile versions in force over all of them. */
const RANGE_SEQS = [0, Number.MAX_SAFE_INTEGER] as const;

const base = { app_id: 7, skip_user_properties_sync: false, server_upload_time: T, time: T - 1 } as const;
const ada = { ...base, user_id: 'user-ada', device_id: 'device-ada' } as const;
const events: Partial<StoredEvent>[] = [
  { ...base, event_type: 'Quote "and" \\ back\nslash\u0001', user_id: 'ü-ser ✓', insert_id: 'i-1', event_properties: { 'a "b"': [1, 2.5, null], nested: { x: true } }, session_id: 1795669200000, event_id: 3, location_lat: 45, location_lng: -0.125, plan: { branch: 'main' } },
  { ...base, event_type: 'Bare', device_id: 'device-2', user_properties: { $set: { tier: 'gold' } }, groups: { company: ['a', 'b'] }, group_properties: { $set: { size: 10 } } },
  // Whole and fractional doubles among the columns and the revenue properties.
  { ...base, event_type: 'Buy', device_id: 'device-3', price: 5, quantity: 3, revenue: 15, productId: 'sku "1"', location_lat: -0.5, location_lng: 180 },
  // Ada: no version before her first versioned event; own keys over her profile, in its order.
  { ...ada, event_type: 'Open', user_properties: { 'odd "key"\n': 'ü ✓', seen: 1 } },
  { ...ada, event_type: '$identify', user_properties: { $set: { plan: 'pro', visits: 2.5, nested: { deep: [1, null] }, ['__proto__']: 'data' } } },
  { ...ada, event_type: 'Play', app_version: '1.0', user_properties: { visits: 3, extra: null, 'odd "key"\n': 'again' } },
  { ...ada, event_type: 'Buy', app_version: '2.0', revenue: 9.5, price: 9.5 },
  { ...ada, event_type: '$identify', user_properties: { $unset: { plan: '-' }, $add: { visits: 1 } } },
  { ...ada, event_type: 'Leave', user_properties: {} },
  // Bo's paying and start_version set in the profile (as the Identify API does) win over his events'.
  { ...base, event_type: '$identify', user_id: 'user-bo', user_properties: { $set: { paying: 'true', start_version: 3 } } },
  { ...base, event_type: 'Open', user_id: 'user-bo', app_version: '1.0', user_properties: { seen: true } },
  // Doubles JavaScript writes in other forms than DuckDB: whole beyond 2^53, exponents from 1e21, negative zero.
  { ...base, event_type: 'Far', device_id: 'device-5', price: 123456789012345680000, revenue: -1e21, quantity: 1, location_lat: 1.5e300, location_lng: -0, event_properties: { tiny: 1e-7 } },
  { ...base, event_type: 'Near', device_id: 'device-6', price: 9007199254740994, revenue: 0.1 + 0.2, location_lat: 2e-7, location_lng: 1e21 },
];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-export-lines-'));
  engine = await DuckDbEngine.open(dataDir);
  const segment = join(dataDir, 'segment.ndjson');
  writeFileSync(segment, `${events.map((event) => engine.journalLine(event as StoredEvent)).join('\n')}\n`);
  await engine.loadSegment(segment, 'segment.ndjson');
});
afterAll(async () => {
  await engine?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The users' histories as the ClickHouse engine reads them (exported-users.ts), here from DuckDB's tables. */
/** The histories the ClickHouse engine reads (the shared reader), here over DuckDB's tables. */
const histories = (): Promise<Map<number, UserHistory>> =>
  userHistories((sql) => engine.query(sql), new DuckDbDialect(), 7, 'svc_id IS NOT NULL', RANGE_SEQS, {
    sql: 'CAST(properties AS VARCHAR) AS properties',
    read: (row) => ({ text: row.properties as string, ...splitText(row.properties as string) }),
  });

async function duckdbLines(): Promise<string[]> {
  let written = '';
  for await (const text of engine.exportLines(7, ...RANGE)) written += text;
  return written.split('\n').slice(0, -1);
}

test("DuckDB's lines are the JavaScript writer's lines, byte for byte", async () => {
  const users = await histories();
  const rows = await engine.query(exportRowsSql(DUCKDB_EXPORT_WORDS, 7, ...RANGE));
  const javascript = linesText(
    rows.map((row) => {
      const own = splitText(row.user_properties as string | null);
      return withUserAtEvent({ ...row, user_property_keys: own.keys, user_property_values: own.values }, users);
    }),
  );
  const duckdb = await duckdbLines();
  expect(duckdb).toHaveLength(events.length);
  expect(`${duckdb.join('\n')}\n`).toBe(javascript);
  const names = EXPORT_FIELDS.map(([name]) => name);
  for (const line of duckdb) expect(Object.keys(JSON.parse(line))).toEqual(names);
  const [first, second, third] = duckdb.map((line) => JSON.parse(line));
  expect(first).toMatchObject({ event_type: events[0]!.event_type, user_id: 'ü-ser ✓', event_properties: events[0]!.event_properties, location_lat: 45, location_lng: -0.125, client_event_time: '2026-11-20 09:30:15.006000', server_upload_time: '2026-11-20 09:30:15.007000' });
  // An event of no known profile keeps what it carried, even operations (only `$identify` applies them).
  expect(second).toMatchObject({ user_properties: { $set: { tier: 'gold' } }, groups: { company: ['a', 'b'] }, event_properties: {}, plan: {}, session_id: null, paying: false, start_version: null });
  expect(duckdb[2]).toContain('"event_properties":{"$price":5,"$quantity":3,"$revenue":15,"$productId":"sku \\"1\\""}');
  expect(third).toMatchObject({ location_lat: -0.5, location_lng: 180, paying: true });
});

test("a user's lines carry the user properties, paying and start_version in force at each event", async () => {
  const lines = (await duckdbLines()).slice(3, -2).map((line) => JSON.parse(line));
  const profile = { plan: 'pro', visits: 2.5, nested: { deep: [1, null] }, ['__proto__']: 'data' };
  const later = { visits: 3.5, nested: { deep: [1, null] }, ['__proto__']: 'data' };
  const state = (event: { event_type: string; user_properties: object; paying: boolean; start_version: string | null }) => [event.event_type, JSON.stringify(event.user_properties), event.paying, event.start_version];
  expect(lines.map(state)).toEqual([
    ['Open', JSON.stringify({ 'odd "key"\n': 'ü ✓', seen: 1 }), false, '1.0'],
    ['$identify', JSON.stringify(profile), false, '1.0'],
    ['Play', JSON.stringify({ ...profile, visits: 3, extra: null, 'odd "key"\n': 'again' }), false, '1.0'],
    ['Buy', JSON.stringify(profile), true, '1.0'],
    ['$identify', JSON.stringify(later), true, '1.0'],
    ['Leave', JSON.stringify(later), true, '1.0'],
    ['$identify', JSON.stringify({ paying: 'true', start_version: 3 }), true, '3'],
    ['Open', JSON.stringify({ paying: 'true', start_version: 3, seen: true }), true, '3'],
  ]);
});

test("ClickHouse's lines drop an exponent's + as DuckDB's do, never a + inside a text", () => {
  const line = JSON.stringify({ text: 'x 1e+21 \\"e+ "', far: 1e21, near: -1.5e300, tiny: 1e-7, list: [2e21, 'e+'] });
  expect(withoutExponentPlus(line)).toBe('{"text":"x 1e+21 \\\\\\"e+ \\"","far":1e21,"near":-1.5e300,"tiny":1e-7,"list":[2e21,"e+"]}');
  expect(withoutExponentPlus('{"a":"e+"}')).toBe('{"a":"e+"}');
});
