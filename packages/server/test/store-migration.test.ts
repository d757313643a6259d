// A data directory written before a column was added to the events table opens, keeps its
// events, and takes events with the new column.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, expect, test } from 'vitest';
import { DEFAULT_EVENT_RULES, toStoredEvent } from '../src/ingest/events.js';
import { DuckDbEngine, EVENT_COLUMNS } from '../src/store/duckdb.js';

let dataDir: string;
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

test('an events table without android_app_set_id gets the column; old and new events read back', async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-migration-'));
  const { android_app_set_id: _added, ...before } = EVENT_COLUMNS;
  const old = await DuckDBInstance.create(join(dataDir, 'events.duckdb'));
  const connection = await old.connect();
  await connection.run(`CREATE TABLE events (${Object.entries(before).map(([name, type]) => `"${name}" ${type}`).join(', ')}, seq BIGINT)`);
  await connection.run(`INSERT INTO events (app_id, event_type, time, server_upload_time, skip_user_properties_sync, seq) VALUES (7, 'Old Event', 1, 1, false, 1)`);
  connection.closeSync();
  old.closeSync();

  const engine = await DuckDbEngine.open(dataDir);
  const event = toStoredEvent({ event_type: 'New Event', device_id: 'device-00001', android_app_set_id: 'SET-ID-1' }, { appId: 7, receivedAt: 2, remoteAddress: '' }, DEFAULT_EVENT_RULES);
  const segment = join(dataDir, 'segment.ndjson');
  writeFileSync(segment, `${JSON.stringify(event)}\n`);
  await engine.loadSegment(segment, 'segment.ndjson');
  const events = await engine.events(7);
  expect(events.map((e) => [e.event_type, e.android_app_set_id])).toEqual([
    ['Old Event', null],
    ['New Event', 'SET-ID-1'],
  ]);
  await engine.close();
});

test('events stored before identities get svc_ids in load order, and profiles are rebuilt from their $identify events', async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-migration-'));
  const old = await DuckDBInstance.create(join(dataDir, 'events.duckdb'));
  const connection = await old.connect();
  await connection.run(`CREATE TABLE events (${Object.entries(EVENT_COLUMNS).map(([name, type]) => `"${name}" ${type}`).join(', ')}, seq BIGINT)`);
  await connection.run(`INSERT INTO events (app_id, event_type, user_id, device_id, user_properties, time, server_upload_time, skip_user_properties_sync, seq) VALUES
    (7, 'Anonymous', NULL, 'device-old', NULL, 1, 1, false, 1),
    (7, '$identify', 'user-old', 'device-old', '{"$set": {"plan": "pro"}}', 2, 2, false, 2),
    (7, 'Later', NULL, 'device-old', NULL, 3, 3, false, 3),
    (7, 'Someone else', 'user-other', NULL, NULL, 4, 4, false, 4)`);
  connection.closeSync();
  old.closeSync();

  const engine = await DuckDbEngine.open(dataDir);
  const events = await engine.events(7);
  expect(events.map((e) => [e.event_type, e.svc_id])).toEqual([
    ['Anonymous', 1],
    ['$identify', 1],
    ['Later', 1],
    ['Someone else', 2],
  ]);
  expect(await engine.userProfile(7, 'user-old')).toEqual({ plan: 'pro' });
  expect(await engine.userProfile(7, 'device-old')).toEqual({ plan: 'pro' });
  await engine.close();
});
