// The per-user rows kept at load (store/duckdb/user-summaries.ts) always equal what the events
// say: each user's first event with an app_version and first with a revenue, through merges of
// users (an anonymous device's history joining its user's) and a reopen that rebuilds them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import type { StoredEvent } from '../../../src/store/types.js';

let dataDir: string;
let engine: DuckDbEngine;
let segments = 0;
const T = Date.UTC(2026, 10, 20, 9);

const event = (fields: Partial<StoredEvent>): Partial<StoredEvent> => ({ app_id: 7, skip_user_properties_sync: false, server_upload_time: T, time: T, event_type: 'Play', ...fields });

async function load(events: Partial<StoredEvent>[]): Promise<void> {
  const path = join(dataDir, `segment-${++segments}.ndjson`);
  writeFileSync(path, `${events.map((e) => engine.journalLine(e as StoredEvent)).join('\n')}\n`);
  await engine.loadSegment(path, `segment-${segments}`);
}

const kept = () => engine.query('SELECT svc_id, start_seq, start_version, first_paid_seq FROM user_summaries ORDER BY svc_id');
const fromEvents = () =>
  engine.query(`SELECT svc_id, min(ingest_seq) FILTER (WHERE app_version IS NOT NULL) AS start_seq, arg_min(app_version, ingest_seq) FILTER (WHERE app_version IS NOT NULL) AS start_version,
    min(ingest_seq) FILTER (WHERE revenue IS NOT NULL) AS first_paid_seq FROM events WHERE svc_id IS NOT NULL GROUP BY svc_id ORDER BY svc_id`);
const summaryOf = async (userId: string) => (await engine.query(`SELECT s.start_version, s.first_paid_seq IS NOT NULL AS paid FROM user_summaries s JOIN identity_users u USING (svc_id) WHERE u.user_id = '${userId}'`))[0];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-user-summaries-'));
  engine = await DuckDbEngine.open(dataDir);
});
afterAll(async () => {
  await engine?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('rows follow the loads, a merged history counts from its earliest event, and a reopen rebuilds them', async () => {
  // An anonymous device plays version 1.0 and buys; Ada (another device) starts on 2.0; Bo never has a version.
  await load([
    event({ device_id: 'device-anon', app_version: '1.0' }),
    event({ device_id: 'device-anon', revenue: 4.5, price: 4.5 }),
    event({ user_id: 'ada', device_id: 'device-ada', app_version: '2.0' }),
    event({ user_id: 'bo', device_id: 'device-bo' }),
  ]);
  expect(await kept()).toEqual(await fromEvents());
  expect(await summaryOf('ada')).toEqual({ start_version: '2.0', paid: false });
  // Later events never replace a first; the anonymous device turns out to be Ada's: her history starts at 1.0 and she paid.
  await load([event({ user_id: 'ada', device_id: 'device-ada', app_version: '3.0', revenue: 1 }), event({ user_id: 'ada', device_id: 'device-anon' }), event({ user_id: 'bo', app_version: '5.0' })]);
  expect(await kept()).toEqual(await fromEvents());
  expect(await summaryOf('ada')).toEqual({ start_version: '1.0', paid: true });
  expect(await summaryOf('bo')).toEqual({ start_version: '5.0', paid: false });
  // Bo's first revenue comes after his row was written without one; a later version changes nothing.
  await load([event({ user_id: 'bo', revenue: 2, price: 2, app_version: '6.0' })]);
  expect(await kept()).toEqual(await fromEvents());
  expect(await summaryOf('bo')).toEqual({ start_version: '5.0', paid: true });
  const before = await kept();
  await engine.close();
  // A data directory of a build without the rows: rebuilt from the events at open.
  const bare = await DuckDbEngine.open(dataDir);
  await bare.query('DELETE FROM user_summaries');
  await bare.close();
  engine = await DuckDbEngine.open(dataDir);
  expect(await kept()).toEqual(before);
});
