// Two shards of two replicas each under the ClickHouse engine (ZooKeeper and four ClickHouse
// 18.16 servers on loopback, cluster `svc`): the events split by user across the shards, every
// other table on the first. The reporting dataset answers as on DuckDB; users stored on
// different shards merge; a deletion job reaches every shard; a replica of a shard killed
// during questions is replaced by the other; a whole shard down fails questions and loads as
// storage unavailable (503 over HTTP), and once it is back the load runs again, every event once.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ClickHouseCluster, startCluster } from '../../../../../scripts/clickhouse/cluster.mjs';
import { reportRange } from '../../../src/model/time.js';
import { isUnavailable } from '../../../src/shared/unavailable.js';
import { ClickHouseEngine } from '../../../src/store/clickhouse/engine.js';
import { ClickHouseEvents } from '../../../src/store/clickhouse/events.js';
import { reportReplicas } from '../../../src/store/clickhouse/replica-report.js';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import type { StoredEvent } from '../../../src/store/types.js';
import { generateEvents, type UploadEvent } from '../../reporting/dataset.js';
import { expectAgreement as expectAgreementOf, loadUntilDone as loadUntilDoneOn, type Question } from './cluster-agreement.js';
import { stored } from './engines.js';
import { memorySession } from './memory-session.js';

const APP = 12;
const START = Date.UTC(2026, 1, 20);
const DAY = 86_400_000;
const DATABASE = 'sharded';
const RANGE = reportRange('UTC', '20260220', '20260331');

let cluster: ClickHouseCluster;
let dir: string;
let session: Awaited<ReturnType<typeof memorySession>>;
let duck: DuckDbEngine;
let ch: ClickHouseEngine;
let loadedEvents = 0;

const events = generateEvents({ users: 300, startMs: START, days: 40 }).map((upload, i) => stored(upload, i, APP, START + 50 * DAY));
const half = Math.ceil(events.length / 2);

/** A statement on one server of the cluster, outside the engine; its answer's text. */
async function on(shard: number, replica: number, sql: string): Promise<string> {
  const response = await fetch(`${cluster.server(shard, replica).url}/?database=${DATABASE}`, { method: 'POST', body: sql });
  const text = await response.text();
  if (!response.ok) throw new Error(text);
  return text.trim();
}

/** The shard's own rows of the project (`where` narrows them), once the replica has fetched what the other wrote. */
async function rowsOn(shard: number, replica: number, where = '1'): Promise<number> {
  for (const table of (await on(shard, replica, 'SELECT table FROM system.replicas WHERE database = currentDatabase()')).split('\n')) await on(shard, replica, `SYSTEM SYNC REPLICA ${table}`);
  return Number(await on(shard, replica, `SELECT count() FROM events_local WHERE app_id = ${APP} AND ${where}`));
}

let segments = 0;
/** Loads the events into both engines as one journal segment. */
async function load(batch: StoredEvent[]): Promise<{ path: string; name: string }> {
  const name = `segment-${++segments}`;
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(path, `${batch.map((event) => duck.journalLine(event)).join('\n')}\n`);
  await duck.loadSegment(path, name);
  loadedEvents += batch.length;
  return { path, name };
}

/** What `svc-server admin replicas` prints for every server of the cluster, and how many cannot be used. */
async function report(): Promise<{ unusable: number; printed: string[] }> {
  const printed: string[] = [];
  return { unusable: await reportReplicas(cluster.shardUrls().flat(), DATABASE, (line) => printed.push(line)), printed };
}


const QUESTION: Question = { appId: APP, range: RANGE, now: START + 60 * DAY };
const expectAgreement = () => expectAgreementOf(duck, ch, QUESTION);
const loadUntilDone = (path: string, name: string) => loadUntilDoneOn(ch, path, name);

const openEngine = () =>
  ClickHouseEngine.open({ url: cluster.shardUrls()[0]![0]!, replicaUrls: cluster.shardUrls()[0]!.slice(1), shardUrls: cluster.shardUrls().slice(1), cluster: cluster.cluster, database: DATABASE, mutationTimeLimitMs: 60_000 }, session);

beforeAll(async () => {
  cluster = await startCluster({ shards: 2, replicas: 2 });
  dir = mkdtempSync(join(tmpdir(), 'svc-sharded-'));
  session = await memorySession();
  duck = await DuckDbEngine.open(dir);
  ch = await openEngine();
  const { path, name } = await load(events.slice(0, half));
  await ch.loadSegment(path, name);
}, 180_000);

afterAll(async () => {
  await ch?.close();
  session?.close();
  await duck?.close();
  await cluster?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the events are split by user across the shards, each replica holds its shard whole, the other tables are on the first shard', async () => {
  const users = async (shard: number) => new Set((await on(shard, 0, `SELECT DISTINCT svc_id FROM events_local WHERE app_id = ${APP}`)).split('\n'));
  const [first, second] = [await rowsOn(0, 0), await rowsOn(1, 0)];
  expect(first).toBeGreaterThan(half / 4);
  expect(second).toBeGreaterThan(half / 4);
  expect(first + second).toBe(half);
  expect([await rowsOn(0, 1), await rowsOn(1, 1)]).toEqual([first, second]);
  const [usersOfFirst, usersOfSecond] = [await users(0), await users(1)];
  expect([...usersOfFirst].filter((svcId) => usersOfSecond.has(svcId))).toEqual([]);
  // The kept activity is split as its events are.
  expect(Number(await on(1, 0, `SELECT uniqExact(svc_id) FROM user_firsts_local WHERE app_id = ${APP}`))).toBe(usersOfSecond.size);
  const tables = async (shard: number) => (await on(shard, 0, "SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('profiles', 'loaded_segments', 'events', 'events_local')")).split('\n').sort();
  expect(await tables(0)).toEqual(['events', 'events_local', 'loaded_segments', 'profiles']);
  expect(await tables(1)).toEqual(['events', 'events_local']);
  // The second shard's replicas hold its split tables only.
  expect(await report()).toMatchObject({ unusable: 0, printed: [...Array(2).fill(expect.stringMatching(/: answers; 16 replicated tables, 0 behind/)), ...Array(2).fill(expect.stringMatching(/: answers; 5 replicated tables, 0 behind/)), 'every replica can be used'] });
  await expectAgreement();
}, 120_000);

test('a database laid out otherwise is refused: one made on one shard given shards, shards given in another order than the cluster', async () => {
  const [first, second] = cluster.shardUrls();
  await (await ClickHouseEvents.open({ url: first![0]!, replicaUrls: first!.slice(1), database: 'unsplit' })).close();
  await expect(ClickHouseEvents.open({ url: first![0]!, replicaUrls: first!.slice(1), shardUrls: [second!], cluster: cluster.cluster, database: 'unsplit' })).rejects.toThrow(/^ClickHouse database unsplit was made on one shard/);
  await expect(ClickHouseEvents.open({ url: first![0]!, replicaUrls: first!.slice(1), database: DATABASE })).rejects.toThrow(/^ClickHouse database sharded was made with shards/);
  await expect(ClickHouseEvents.open({ url: second![0]!, shardUrls: [first!], cluster: cluster.cluster, database: 'swapped' })).rejects.toThrow(/\(given as shard 1\) is shard 2 of cluster svc: give the shards in the cluster's order/);
  await expect(ClickHouseEvents.open({ url: first![0]!, shardUrls: [second!], database: 'nameless' })).rejects.toThrow(/need the cluster that lists them/);
}, 60_000);

test('users stored on different shards merge: one user, counted once, on both engines', async () => {
  const at = (day: number, fields: Partial<UploadEvent>) => ({ event_type: 'A', time: START + day * DAY, ...fields });
  const apart = [at(1, { device_id: 'merge-device' }), at(2, { user_id: 'merge-user', device_id: 'merge-device-2' }), at(3, { device_id: 'merge-device' })];
  const { path, name } = await load(apart.map((upload, i) => stored(upload, i, APP, START + 55 * DAY)));
  await ch.loadSegment(path, name);
  const svcIds = async () => (await ch.query(`SELECT DISTINCT svc_id FROM events WHERE device_id = 'merge-device' OR user_id = 'merge-user' ORDER BY svc_id`)).map((row) => Number(row.svc_id));
  const before = await svcIds();
  expect(before).toHaveLength(2);
  // Consecutive ids: one on each shard.
  expect(new Set(before.map((svcId) => svcId % 2)).size).toBe(2);
  const joined = await load([stored(at(4, { user_id: 'merge-user', device_id: 'merge-device' }), 0, APP, START + 56 * DAY)]);
  await ch.loadSegment(joined.path, joined.name);
  expect(await svcIds()).toHaveLength(1);
  const merged = `(device_id = 'merge-device' OR user_id = 'merge-user')`;
  // The merged user's earlier rows stay where they were: on both shards.
  expect([await rowsOn(0, 0, merged), await rowsOn(1, 0, merged)].every((rows) => rows > 0)).toBe(true);
  await expectAgreement();
  const ofUser = async (engine: DuckDbEngine | ClickHouseEngine) => Number((await engine.query(`SELECT count(DISTINCT svc_id) AS n FROM events WHERE app_id = ${APP} AND ${merged}`))[0]!.n);
  expect([await ofUser(duck), await ofUser(ch)]).toEqual([1, 1]);
}, 120_000);

test('a deletion job reaches every shard', async () => {
  const userIds = ['user-3', 'user-4', 'user-5', 'user-6'];
  for (const engine of [duck, ch]) {
    const svcIds = await engine.svcIdsOfUsers(APP, userIds);
    expect(svcIds.size).toBe(4);
    if (engine === ch) expect(new Set([...svcIds.values()].map((svcId) => svcId % 2)).size).toBe(2);
    await engine.addDeletionEntries(APP, '2026-04-02', [...svcIds.values()].map((svcId) => ({ svcId, requester: 'admin', requestedOnDay: '2026-03-31' })));
    await engine.scrubDeletionJob(APP, '2026-04-02', '2026-04-02');
  }
  const remaining = Number((await duck.query(`SELECT count(*) AS n FROM events WHERE app_id = ${APP}`))[0]!.n);
  expect(remaining).toBeLessThan(loadedEvents);
  expect((await rowsOn(0, 1)) + (await rowsOn(1, 1))).toBe(remaining);
  const deleted = `user_id IN (${userIds.map((id) => `'${id}'`).join(', ')})`;
  expect([await rowsOn(0, 0, deleted), await rowsOn(1, 0, deleted)]).toEqual([0, 0]);
  await expectAgreement();
}, 120_000);

test('a replica of the second shard killed during questions: the other answers them', async () => {
  for (const replica of [0, 1]) {
    const asked = expectAgreement();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await cluster.kill(1, replica);
    await asked;
    await expectAgreement();
    await cluster.restart(1, replica);
  }
}, 180_000);

test('the second shard down: questions and loads fail as storage unavailable; once it is back the load runs again, every event once', async () => {
  const { path, name } = await load(events.slice(half));
  await Promise.all([cluster.kill(1, 0), cluster.kill(1, 1)]);
  expect(await report()).toMatchObject({ unusable: 2, printed: [expect.stringMatching(/answers/), expect.stringMatching(/answers/), expect.stringMatching(/does not answer/), expect.stringMatching(/does not answer/), expect.stringMatching(/^2 of 4 replicas cannot be used now/)] });
  for (const failing of [ch.query(`SELECT count() FROM events WHERE app_id = ${APP}`), ch.loadSegment(path, name)]) {
    const failure = await failing.then(() => undefined, (error: unknown) => error);
    expect(isUnavailable(failure), String(failure)).toBe(true);
  }
  const again = loadUntilDone(path, name);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await Promise.all([cluster.restart(1, 0), cluster.restart(1, 1)]);
  await again;
  const stored = Number((await duck.query(`SELECT count(*) AS n FROM events WHERE app_id = ${APP}`))[0]!.n);
  expect((await rowsOn(0, 0)) + (await rowsOn(1, 1))).toBe(stored);
  await expectAgreement();
}, 240_000);
