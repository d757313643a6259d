// DuckDB writes the Export API's lines itself (its JSON writer, from a struct); ClickHouse's
// engine writes them in JavaScript from rows. Both must write the same line: the same keys in
// the same order and the same values, for texts that need escaping, numbers, missing values:
// the same bytes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { DUCKDB_EXPORT_WORDS } from '../../../src/store/duckdb/export-lines.js';
import { EXPORT_FIELDS } from '../../../src/store/export-lines.js';
import { exportRowsSql, linesText } from '../../../src/store/exported-events.js';
import type { StoredEvent } from '../../../src/store/types.js';

let dataDir: string;
let engine: DuckDbEngine;
const T = Date.UTC(2026, 10, 20, 9, 30, 15, 7);

const base = { app_id: 7, skip_user_properties_sync: false, server_upload_time: T, time: T - 1 } as const;
const events: Partial<StoredEvent>[] = [
  { ...base, event_type: 'Quote "and" \\ back\nslash\u0001', user_id: 'ü-ser ✓', insert_id: 'i-1', event_properties: { 'a "b"': [1, 2.5, null], nested: { x: true } }, session_id: 1795669200000, event_id: 3, location_lat: 45, location_lng: -0.125, plan: { branch: 'main' } },
  { ...base, event_type: 'Bare', device_id: 'device-2', user_properties: { $set: { tier: 'gold' } }, groups: { company: ['a', 'b'] }, group_properties: { $set: { size: 10 } } },
  // Whole and fractional doubles among the columns and the revenue properties.
  { ...base, event_type: 'Buy', device_id: 'device-3', price: 5, quantity: 3, revenue: 15, productId: 'sku "1"', location_lat: -0.5, location_lng: 180 },
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

test("DuckDB's lines are the JavaScript writer's lines, byte for byte", async () => {
  let written = '';
  for await (const text of engine.exportLines(7, T - 3_600_000, T + 3_600_000)) written += text;
  const rows = await engine.query(exportRowsSql(DUCKDB_EXPORT_WORDS, 7, T - 3_600_000, T + 3_600_000));
  const duckdb = written.split('\n').slice(0, -1);
  const javascript = linesText(rows).split('\n').slice(0, -1);
  expect(duckdb).toHaveLength(3);
  expect(duckdb).toEqual(javascript);
  const names = EXPORT_FIELDS.map(([name]) => name);
  for (const line of duckdb) expect(Object.keys(JSON.parse(line))).toEqual(names);
  const [first, second, third] = duckdb.map((line) => JSON.parse(line));
  expect(first).toMatchObject({ event_type: events[0]!.event_type, user_id: 'ü-ser ✓', event_properties: events[0]!.event_properties, location_lat: 45, location_lng: -0.125, client_event_time: '2026-11-20 09:30:15.006000', server_upload_time: '2026-11-20 09:30:15.007000' });
  expect(second).toMatchObject({ user_properties: { $set: { tier: 'gold' } }, groups: { company: ['a', 'b'] }, event_properties: {}, plan: {}, session_id: null });
  expect(duckdb[2]).toContain('"event_properties":{"$price":5,"$quantity":3,"$revenue":15,"$productId":"sku \\"1\\""}');
  expect(third).toMatchObject({ location_lat: -0.5, location_lng: 180 });
});
