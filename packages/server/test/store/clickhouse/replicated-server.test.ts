// A server on two ClickHouse replicas of one shard (ZooKeeper, two ClickHouse 18.16 servers and
// PostgreSQL on loopback), through HTTP, and a second server process beside it that uses the
// other replica first: the users both receive are one user each, a repeat sent to both counted
// once. A replica down is not seen by clients; both down, or
// PostgreSQL down, reporting answers 503 with Retry-After in the documented shape while
// ingestion goes on into the journal; once they are back the server catches up by itself,
// every acknowledged event counted once and held by both replicas.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type RunningServer, startServer } from '../../../src/server.js';
import { reportReplicas } from '../../../src/store/clickhouse/replica-report.js';
import { type PostgresServer, startPostgres } from '../../../../../scripts/postgres/start.mjs';
import { type Harness, startHarness } from '../../support/harness.js';
import { postJson, send } from '../../support/http.js';
import { ReplicaPair } from './replica-pair.js';

const DATABASE = 'replicated_server';
let postgres: PostgresServer;
let replicas: ReplicaPair;
let h: Harness;
let sent = 0;


const today = () => new Date().toISOString().slice(0, 10).replace(/-/g, '');
/** Today's totals of `Tapped` as the server answers them (status and count). */
async function tapped(): Promise<{ status: number; count?: number; retryAfter?: string | null; body?: unknown }> {
  const auth = `Basic ${Buffer.from(`${h.project.api_key}:${h.project.secret_key}`).toString('base64')}`;
  const answer = await send(`${h.server.urls.app}/api/2/events/segmentation?e=${encodeURIComponent('{"event_type":"Tapped"}')}&m=totals&start=${today()}&end=${today()}`, { headers: { authorization: auth } });
  if (answer.status !== 200) return { status: answer.status, retryAfter: answer.headers.get('retry-after'), body: answer.body };
  return { status: 200, count: answer.body.data.series[0][0] };
}

async function ingest(count: number, through: RunningServer = h.server): Promise<void> {
  const events = Array.from({ length: count }, (_, i) => ({ event_type: 'Tapped', user_id: `user-${(sent + i) % 40}`, insert_id: `tap-${sent + i}` }));
  sent += count;
  expect((await postJson(`${through.urls.ingest}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
}

/** The events a replica holds once it has fetched what the other wrote, to every table. */
async function eventsOn(index: number): Promise<number> {
  await replicas.synced(index);
  return Number(await replicas.on(index, "SELECT count() FROM events WHERE event_type = 'Tapped'"));
}

/** The replica holds every event sent, once it has caught up by itself (a replica started again fetches in the background). */
const expectHeld = (index: number) => expect.poll(() => eventsOn(index), { timeout: 60_000, interval: 500 }).toBe(sent);

const expectCaughtUp = () => expect.poll(async () => (await tapped()).count, { timeout: 60_000, interval: 250 }).toBe(sent);

beforeAll(async () => {
  [replicas, postgres] = await Promise.all([ReplicaPair.start(DATABASE), startPostgres()]);
  h = await startHarness([], { engine: 'clickhouse', clickhouseUrl: replicas.url(0), clickhouseReplicaUrls: [replicas.url(1)], clickhouseDatabase: DATABASE, postgresUrl: postgres.url });
}, 180_000);

afterAll(async () => {
  await h?.close();
  await Promise.all([replicas?.stop(), postgres?.stop()]);
});

test('events sent are answered, and held by both replicas', async () => {
  await ingest(300);
  await expectCaughtUp();
  await expectHeld(0);
  await expectHeld(1);
}, 120_000);

test('a second server process on the other replica first: one user per user, a repeat sent to both counted once', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-second-'));
  const second = await startServer({
    dataDir,
    sharedDir: h.dataDir,
    host: '127.0.0.1',
    port: 0,
    loadIntervalMs: 200,
    engine: 'clickhouse',
    clickhouseUrl: replicas.url(1),
    clickhouseReplicaUrls: [replicas.url(0)],
    clickhouseDatabase: DATABASE,
    postgresUrl: postgres.url,
  });
  try {
    // The second replica fetches nothing for a while: what the first server loads meanwhile
    // (users user-0 … user-39) is not there when the second server loads the same users.
    await replicas.on(1, 'SYSTEM STOP FETCHES');
    await ingest(200);
    await expect.poll(async () => (await tapped()).count, { timeout: 30_000, interval: 250 }).toBe(sent);
    await ingest(200, second);
    setTimeout(() => void replicas.on(1, 'SYSTEM START FETCHES'), 2_000);
    const repeat = { event_type: 'Tapped', user_id: 'user-1', insert_id: 'sent-to-both' };
    for (const server of [h.server, second]) expect((await postJson(`${server.urls.ingest}/batch`, { api_key: h.project.api_key, events: [repeat] })).status).toBe(200);
    sent += 1;
    await expectCaughtUp();
    await expectHeld(1);
    const users = (index: number) => replicas.on(index, "SELECT uniqExact(user_id), uniqExact(svc_id) FROM events WHERE event_type = 'Tapped'");
    expect(await users(0)).toBe('40\t40');
    expect(await users(1)).toBe('40\t40');
  } finally {
    await second.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 180_000);

test('one replica down at a time: answered as before, loads go on, the replica catches up', async () => {
  for (const index of [0, 1]) {
    await replicas.kill(index);
    expect(await tapped()).toEqual({ status: 200, count: sent });
    await ingest(100);
    await expectCaughtUp();
    await replicas.restart(index);
    await expectHeld(index);
  }
}, 180_000);

test('a replica back while the other, which holds events it has not, is down: not read from (503) until the other is back', async () => {
  await replicas.kill(0);
  await ingest(100);
  await expectCaughtUp();
  await replicas.kill(1);
  await replicas.restart(0);
  expect(await tapped()).toMatchObject({ status: 503, retryAfter: '5' });
  const printed: string[] = [];
  expect(await reportReplicas([replicas.url(0), replicas.url(1)], DATABASE, (line) => printed.push(line))).toBe(2);
  expect(printed[0]).toMatch(/: answers; 16 replicated tables, [1-9]\d* behind/);
  expect(printed).toContainEqual(expect.stringMatching(/^ {2}events: \d+ parts to fetch, \d+ queued, shared log read to \d+ of \d+$/));
  expect(printed).toContainEqual(expect.stringMatching(/: does not answer/));
  await replicas.restart(1);
  await expectCaughtUp();
  await expectHeld(0);
}, 180_000);

test('both replicas down: 503 with Retry-After, events still acknowledged; back: every event counted once', async () => {
  await Promise.all([replicas.kill(0), replicas.kill(1)]);
  expect(await tapped()).toEqual({ status: 503, retryAfter: '5', body: { code: 503, error: 'Service unavailable: its storage did not answer; send the request again in 5 s' } });
  await ingest(100);
  await Promise.all([replicas.restart(0), replicas.restart(1)]);
  await expectCaughtUp();
  await expectHeld(0);
  await expectHeld(1);
}, 180_000);

test('PostgreSQL down: 503 with Retry-After, events still acknowledged; up again: caught up', async () => {
  await postgres.down();
  expect(await tapped()).toMatchObject({ status: 503, retryAfter: '5' });
  await ingest(100);
  await postgres.up();
  await expectCaughtUp();
  await expectHeld(1);
}, 180_000);
