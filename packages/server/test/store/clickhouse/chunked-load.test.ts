// A segment larger than one chunk of the ClickHouse engine's load (chunks of 2 lines here)
// loads as DuckDB loads it and as one chunk loads it: a device seen anonymously in the first
// chunk and identified in a later one has its user's svc_id on every event, profiles and
// their versions, group profiles, holds and stored repeats as in one pass.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ClickHouseServer, startClickHouse } from '../../../../../scripts/clickhouse/start.mjs';
import { ClickHouseEngine } from '../../../src/store/clickhouse/engine.js';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { EVENT_COLUMNS, journalLine } from '../../../src/store/journal-line.js';
import type { Engine, JournalRecord, StoredEvent } from '../../../src/store/types.js';
import { memorySession } from './memory-session.js';

const APP = 5;
const T0 = Date.UTC(2026, 3, 1, 12);
const CHUNK_LINES = 2;

let clickhouse: ClickHouseServer;
let dir: string;
let duck: DuckDbEngine;
let chunked: ClickHouseEngine;
let whole: ClickHouseEngine;
const sessions: Awaited<ReturnType<typeof memorySession>>[] = [];
let segments = 0;

function event(fields: Partial<StoredEvent>): StoredEvent {
  const empty = Object.fromEntries(Object.keys(EVENT_COLUMNS).map((name) => [name, null])) as unknown as StoredEvent;
  return { ...empty, app_id: APP, event_type: 'Page', time: T0, server_upload_time: T0, skip_user_properties_sync: false, ...fields };
}

async function openClickHouse(database: string, loadChunkLines?: number): Promise<ClickHouseEngine> {
  const session = await memorySession();
  sessions.push(session);
  return ClickHouseEngine.open({ url: clickhouse.url, database, loadChunkLines }, session);
}

async function load(engines: Engine[], records: JournalRecord[]): Promise<void> {
  const name = `segment-${++segments}`;
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(path, `${records.map((record) => journalLine(record)).join('\n')}\n`);
  for (const engine of engines) await engine.loadSegment(path, name);
}

/** What the engines answer of the project's events, identities and profiles. */
async function answers(engine: Engine) {
  const ids = ['u1', 'd0', 'd1', 'd2'];
  return {
    events: await engine.events(APP),
    profiles: await Promise.all(ids.map((id) => engine.userProfile(APP, id))),
    users: [...(await engine.svcIdsOfUsers(APP, ids))],
    devices: [...(await engine.svcIdsOfDevices(APP, ids))],
    versions: await engine.query('SELECT app_id, svc_id, ingest_seq, properties FROM profile_versions ORDER BY ingest_seq'),
    group: await engine.groupProfile(APP, { group_type: 'org', group_value: 'acme' }),
    held: await engine.heldAttributions(0),
  };
}

/** Every row the ClickHouse engine wrote for the segments (the load's wall-clock time left out). */
async function rows(engine: ClickHouseEngine) {
  const tables = ['events', 'identity_users', 'identity_devices', 'svc_merges', 'profiles', 'profile_versions', 'group_profiles', 'held_attributions'];
  const written = Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await engine.query(`SELECT * FROM ${table} ORDER BY tuple(*)`)])));
  return { ...written, loaded: await engine.query('SELECT name, last_ingest_seq FROM loaded_segments ORDER BY name') };
}

beforeAll(async () => {
  clickhouse = await startClickHouse();
  dir = mkdtempSync(join(tmpdir(), 'svc-chunked-load-'));
  duck = await DuckDbEngine.open(dir);
  chunked = await openClickHouse('chunked_load', CHUNK_LINES);
  whole = await openClickHouse('whole_load');
}, 60_000);

afterAll(async () => {
  await duck?.close();
  await chunked?.close();
  await whole?.close();
  for (const session of sessions) session.close();
  await clickhouse?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a segment of several chunks loads as one pass: svc_ids after a merge across chunks, ingest_seqs, profiles, holds, repeats', async () => {
  await load(
    [duck, chunked, whole],
    [
      // Chunk 1: u1 on d0; d1 anonymous, with a profile of its own.
      event({ user_id: 'u1', device_id: 'd0', insert_id: 'i-1' }),
      event({ device_id: 'd1', event_type: '$identify', user_properties: { $set: { plan: 'free', n: 1 } }, time: T0 + 1, insert_id: 'i-2' }),
      // Chunk 2: d1 again, then identified as u1 (d1 merges into u1).
      { held_attribution: { id: 'h-1', app_id: APP, received_at: T0 + 2, event: { idfa: 'ad-1' } } },
      event({ device_id: 'd1', time: T0 + 3, insert_id: 'i-3' }),
      // Chunk 3.
      event({ user_id: 'u1', device_id: 'd1', time: T0 + 4, insert_id: 'i-4' }),
      event({ user_id: 'u1', event_type: '$identify', user_properties: { $add: { n: 2 } }, time: T0 + 5 }),
      // Chunk 4.
      event({ event_type: '$groupidentify', groups: { org: 'acme' }, group_properties: { $set: { size: 10 } }, time: T0 + 6 }),
      { ...event({ device_id: 'd2', time: T0 + 7, insert_id: 'i-5' }), released_attribution: 'h-1' },
      // Chunk 5.
      event({ device_id: 'd2', event_type: '$identify', user_properties: { $set: { plan: 'trial' } }, time: T0 + 8 }),
    ],
  );
  const chunkedAnswers = await answers(chunked);
  expect(chunkedAnswers).toEqual(await answers(duck));
  const u1 = new Map(chunkedAnswers.users).get('u1');
  expect(chunkedAnswers.events.filter((e) => e.device_id === 'd0' || e.device_id === 'd1').map((e) => e.svc_id)).toEqual([u1, u1, u1, u1]);
  expect(chunkedAnswers.profiles[0]).toEqual({ plan: 'free', n: 3 });
  expect(chunkedAnswers.held).toEqual([]);
  const seqs = (await chunked.query('SELECT ingest_seq FROM events ORDER BY ingest_seq')).map((r) => Number(r.ingest_seq));
  // The held attribution's line takes an ingest_seq of its own, as in one pass.
  expect(seqs).toEqual([1, 2, 4, 5, 6, 7, 8, 9]);

  // Repeats of stored events (another process received them) are dropped wherever their chunk.
  await load(
    [chunked, whole],
    [
      event({ user_id: 'u1', device_id: 'd0', insert_id: 'i-1', time: T0 + 10, server_upload_time: T0 + 10 }),
      event({ device_id: 'd3', insert_id: 'i-6', time: T0 + 11, server_upload_time: T0 + 11 }),
      event({ device_id: 'd1', insert_id: 'i-3', time: T0 + 12, server_upload_time: T0 + 12 }),
      event({ user_id: 'u2', device_id: 'd3', time: T0 + 13, server_upload_time: T0 + 13 }),
    ],
  );
  expect((await chunked.events(APP)).map((e) => e.insert_id).slice(-2)).toEqual(['i-6', null]);
  expect(await rows(chunked)).toEqual(await rows(whole));
}, 120_000);
