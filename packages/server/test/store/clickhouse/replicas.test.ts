// Two replicas of one shard under the ClickHouse engine (ZooKeeper and two ClickHouse 18.16
// servers on loopback, the tables ReplicatedMergeTree): the reporting dataset answers as on
// DuckDB through either replica, and faults are waited out. A replica killed during a question
// hands it to the other; one killed during a load fails the load, which runs again on the other
// and keeps every event once; both down, the engine's failures are the storage-unavailable kind
// (503 with Retry-After over HTTP); a replica started again catches up by itself; a deletion
// job reaches both.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { reportRange } from '../../../src/model/time.js';
import { isUnavailable } from '../../../src/shared/unavailable.js';
import { ClickHouseEngine } from '../../../src/store/clickhouse/engine.js';
import { ClickHouseEvents } from '../../../src/store/clickhouse/events.js';
import { reportReplicas } from '../../../src/store/clickhouse/replica-report.js';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { generateEvents } from '../../reporting/dataset.js';
import { expectAgreement as expectAgreementOf, loadUntilDone as loadUntilDoneOn, type Question } from './cluster-agreement.js';
import { stored } from './engines.js';
import { ReplicaPair } from './replica-pair.js';
import { memorySession } from './memory-session.js';

const APP = 11;
const START = Date.UTC(2026, 1, 20);
const DAY = 86_400_000;
const DATABASE = 'replicas';
const RANGE = reportRange('UTC', '20260220', '20260331');

let replicas: ReplicaPair;
let dir: string;
let session: Awaited<ReturnType<typeof memorySession>>;
let duck: DuckDbEngine;
let ch: ClickHouseEngine;
const logged: string[] = [];

const events = generateEvents({ users: 300, startMs: START, days: 40 }).map((upload, i) => stored(upload, i, APP, START + 50 * DAY));
const third = Math.ceil(events.length / 3);
const SEGMENTS = [0, 1, 2].map((i) => events.slice(i * third, (i + 1) * third));

/** The events a replica holds once it has fetched what the other wrote. */
async function eventsOn(index: number): Promise<number> {
  await replicas.synced(index);
  return Number(await replicas.on(index, `SELECT count() FROM events WHERE app_id = ${APP}`));
}


/** The replica that runs an INSERT into the events, once one does. */
async function replicaInserting(): Promise<number> {
  for (;;) {
    for (const index of [0, 1]) {
      const running = await replicas.on(index, "SELECT count() FROM system.processes WHERE query LIKE 'INSERT INTO events%'");
      if (running !== '0') return index;
    }
  }
}

function segmentFile(index: number): string {
  const path = join(dir, `segment-${index + 1}.jsonl`);
  writeFileSync(path, `${SEGMENTS[index]!.map((event) => duck.journalLine(event)).join('\n')}\n`);
  return path;
}

const QUESTION: Question = { appId: APP, range: RANGE, now: START + 60 * DAY };
const expectAgreement = () => expectAgreementOf(duck, ch, QUESTION);
const loadUntilDone = (path: string, name: string) => loadUntilDoneOn(ch, path, name);

beforeAll(async () => {
  replicas = await ReplicaPair.start(DATABASE);
  dir = mkdtempSync(join(tmpdir(), 'svc-replicas-'));
  session = await memorySession();
  duck = await DuckDbEngine.open(dir);
  ch = await ClickHouseEngine.open({ url: replicas.url(0), replicaUrls: [replicas.url(1)], database: DATABASE, mutationTimeLimitMs: 60_000, log: (message) => logged.push(message) }, session);
  const path = segmentFile(0);
  await duck.loadSegment(path, 'segment-1');
  await ch.loadSegment(path, 'segment-1');
}, 120_000);

afterAll(async () => {
  await ch?.close();
  session?.close();
  await duck?.close();
  await replicas?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a database made on one server is refused as replicas, naming its tables', async () => {
  await (await ClickHouseEvents.open({ url: replicas.url(0), database: 'single' })).close();
  await expect(ClickHouseEvents.open({ url: replicas.url(0), replicaUrls: [replicas.url(1)], database: 'single' })).rejects.toThrow(
    /^ClickHouse database single holds tables that are not replicated \(.*events.*\), made with one --clickhouse-url/,
  );
}, 60_000);

test('every table is replicated, and each replica holds every event', async () => {
  for (const index of [0, 1]) {
    const engines = await replicas.on(index, "SELECT DISTINCT engine FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree'");
    expect(engines.split('\n').sort()).toEqual(['ReplicatedAggregatingMergeTree', 'ReplicatedMergeTree']);
    expect(await eventsOn(index)).toBe(SEGMENTS[0]!.length);
  }
  await expectAgreement();
}, 60_000);

test('a replica killed during questions: the other answers them', async () => {
  // Each replica in turn, so that the one in use is killed once whichever it is.
  for (const index of [0, 1]) {
    const asked = expectAgreement();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await replicas.kill(index);
    await asked;
    await expectAgreement();
    await replicas.restart(index);
  }
  // The replica in use was killed at least once: the operator is told which one took over.
  expect(logged.some((message) => /^ClickHouse replica http:\/\/127\.0\.0\.1:\d+ is not used: .*; trying http:\/\/127\.0\.0\.1:\d+$/.test(message)), logged.join('\n')).toBe(true);
}, 120_000);

test('a replica killed during a load: the load runs again on the other, every event once; the replica catches up when back', async () => {
  const path = segmentFile(1);
  await duck.loadSegment(path, 'segment-2');
  const loading = ch.loadSegment(path, 'segment-2');
  const inserting = await replicaInserting();
  await replicas.kill(inserting);
  const failure = await loading.then(() => undefined, (error: unknown) => error);
  expect(isUnavailable(failure), String(failure)).toBe(true);
  // Loaded again as the server's loader does, until it succeeds; the killed replica comes back
  // meanwhile (the other may not be used before it has fetched what the killed one wrote).
  const again = loadUntilDone(path, 'segment-2');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await replicas.restart(inserting);
  await again;
  const loaded = SEGMENTS[0]!.length + SEGMENTS[1]!.length;
  expect(await eventsOn(1)).toBe(loaded);
  expect(await eventsOn(0)).toBe(loaded);
  await expectAgreement();
}, 240_000);

test('both replicas down: the engine fails as storage unavailable, and goes on once they are back; admin replicas says so', async () => {
  const report = async () => {
    const printed: string[] = [];
    return { unusable: await reportReplicas([replicas.url(0), replicas.url(1)], DATABASE, (line) => printed.push(line)), printed };
  };
  expect(await report()).toMatchObject({ unusable: 0, printed: [expect.stringMatching(/: answers; 16 replicated tables, 0 behind, 0 read-only/), expect.stringMatching(/: answers; 16 replicated tables, 0 behind/), 'every replica can be used'] });
  await Promise.all([replicas.kill(0), replicas.kill(1)]);
  expect(await report()).toMatchObject({ unusable: 2, printed: [expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+: does not answer/), expect.stringMatching(/does not answer/), expect.stringMatching(/^2 of 2 replicas cannot be used now/)] });
  const path = segmentFile(2);
  for (const failing of [ch.query('SELECT 1'), ch.loadSegment(path, 'segment-3')]) {
    const failure = await failing.then(() => undefined, (error: unknown) => error);
    expect(isUnavailable(failure), String(failure)).toBe(true);
  }
  await Promise.all([replicas.restart(0), replicas.restart(1)]);
  await duck.loadSegment(path, 'segment-3');
  await ch.loadSegment(path, 'segment-3');
  expect(await eventsOn(0)).toBe(events.length);
  expect(await eventsOn(1)).toBe(events.length);
  await expectAgreement();
}, 240_000);

test('a deletion job reaches both replicas', async () => {
  const userIds = ['user-3', 'user-4', 'user-5'];
  for (const engine of [duck, ch]) {
    const svcIds = await engine.svcIdsOfUsers(APP, userIds);
    expect(svcIds.size).toBe(3);
    await engine.addDeletionEntries(APP, '2026-04-02', [...svcIds.values()].map((svcId) => ({ svcId, requester: 'admin', requestedOnDay: '2026-03-31' })));
    await engine.scrubDeletionJob(APP, '2026-04-02', '2026-04-02');
  }
  const remaining = await duck.query(`SELECT count(*) AS n FROM events WHERE app_id = ${APP}`);
  expect(Number(remaining[0]!.n)).toBeLessThan(events.length);
  for (const index of [0, 1]) expect(await eventsOn(index)).toBe(Number(remaining[0]!.n));
  await expectAgreement();
}, 240_000);
