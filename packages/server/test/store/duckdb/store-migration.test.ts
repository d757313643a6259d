// A data directory written before a column was added to the events table opens, keeps its
// events, and takes events with the new column.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, expect, test } from 'vitest';
import { DEFAULT_EVENT_RULES, toStoredEvent } from '../../../src/model/events.js';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { EVENT_COLUMNS } from '../../../src/store/journal-line.js';

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

test('deletion jobs, user mappings and feedback written by the engine before SharedEntities read back and take new rows', async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-migration-'));
  const old = await DuckDBInstance.create(join(dataDir, 'events.duckdb'));
  const connection = await old.connect();
  // The tables as DuckDbEngine's own schema created them, with rows it wrote.
  await connection.run(`
    CREATE TABLE identity_users (app_id INTEGER, user_id VARCHAR, svc_id BIGINT, PRIMARY KEY (app_id, user_id));
    INSERT INTO identity_users VALUES (7, 'ada', 1), (7, 'bob', 2);
    CREATE TABLE deletion_jobs (app_id INTEGER, day VARCHAR, scrubbed_on VARCHAR, PRIMARY KEY (app_id, day));
    CREATE TABLE deletion_entries (app_id INTEGER, day VARCHAR, svc_id BIGINT, requester VARCHAR, requested_on_day VARCHAR, PRIMARY KEY (app_id, day, svc_id));
    CREATE TABLE user_mappings (app_id INTEGER, from_svc BIGINT, to_svc BIGINT, from_user VARCHAR, to_user VARCHAR, PRIMARY KEY (app_id, from_svc));
    CREATE TABLE feedback_items (app_id INTEGER, source_id VARCHAR, unique_id VARCHAR, body VARCHAR, author VARCHAR, email VARCHAR, user_id VARCHAR, url VARCHAR, created_at VARCHAR, PRIMARY KEY (app_id, source_id, unique_id));
    CREATE SEQUENCE feedback_part_order;
    CREATE TABLE feedback_parts (app_id INTEGER, source_id VARCHAR, item_id VARCHAR, unique_id VARCHAR, body VARCHAR, author VARCHAR, email VARCHAR, user_id VARCHAR, url VARCHAR, created_at VARCHAR, part_order BIGINT DEFAULT nextval('feedback_part_order'), PRIMARY KEY (app_id, source_id, item_id, unique_id));
    INSERT INTO deletion_jobs VALUES (7, '2026-11-10', NULL);
    INSERT INTO deletion_entries VALUES (7, '2026-11-10', 2, 'admin', '2026-11-01');
    INSERT INTO user_mappings VALUES (7, 1, 2, 'ada', 'bob');
    INSERT INTO feedback_items VALUES (7, 'src', 'i1', 'slow', NULL, NULL, NULL, NULL, '2026-11-01');
    INSERT INTO feedback_parts (app_id, source_id, item_id, unique_id, body, created_at) VALUES (7, 'src', 'i1', 'z-old', 'first', '2026-11-01');`);
  connection.closeSync();
  old.closeSync();

  const engine = await DuckDbEngine.open(dataDir);
  expect(await engine.deletionJobs(7, '2026-11-01', '2026-11-30')).toEqual([
    { appId: 7, day: '2026-11-10', scrubbedOn: null, entries: [{ svcId: 2, requester: 'admin', requestedOnDay: '2026-11-01' }] },
  ]);
  expect((await engine.userMappings(7, ['ada'])).get('ada')).toEqual({ svcId: 1, mappedFrom: [], mappedTo: [{ svcId: 2, userId: 'bob' }] });
  await engine.upsertFeedbackItems(7, 'src', [{ unique_id: 'i1', conversation_parts: [{ unique_id: 'a-new', body: 'second' }] }], '2026-11-02');
  expect((await engine.feedbackItem(7, 'src', 'i1'))?.conversation_parts.map((part) => part.unique_id)).toEqual(['z-old', 'a-new']);
  await engine.close();
});
