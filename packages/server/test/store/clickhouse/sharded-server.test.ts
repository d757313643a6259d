// Two server processes on two ClickHouse shards (two ClickHouse 18.16 servers and PostgreSQL on
// loopback), through HTTP: the users both processes receive are one user each, whichever shard
// holds them, and a repeat sent to both is counted once. A shard down: reporting answers 503
// with Retry-After in the documented shape while ingestion goes on into the journal; once the
// shard is back the server catches up by itself, every acknowledged event counted once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ClickHouseCluster, startCluster } from '../../../../../scripts/clickhouse/cluster.mjs';
import { type PostgresServer, startPostgres } from '../../../../../scripts/postgres/start.mjs';
import { type RunningServer, startServer } from '../../../src/server.js';
import { type Harness, startHarness } from '../../support/harness.js';
import { postJson, send } from '../../support/http.js';

const DATABASE = 'sharded_server';
let postgres: PostgresServer;
let cluster: ClickHouseCluster;
let h: Harness;
let second: RunningServer;
let secondDir: string;
let sent = 0;

const today = () => new Date().toISOString().slice(0, 10).replace(/-/g, '');
/** Today's totals and unique users of `Tapped` as the server answers them. */
async function tapped(): Promise<{ status: number; count?: number; users?: number; retryAfter?: string | null; body?: unknown }> {
  const auth = `Basic ${Buffer.from(`${h.project.api_key}:${h.project.secret_key}`).toString('base64')}`;
  const ask = (measure: string) => send(`${h.server.urls.app}/api/2/events/segmentation?e=${encodeURIComponent('{"event_type":"Tapped"}')}&m=${measure}&start=${today()}&end=${today()}`, { headers: { authorization: auth } });
  const totals = await ask('totals');
  if (totals.status !== 200) return { status: totals.status, retryAfter: totals.headers.get('retry-after'), body: totals.body };
  return { status: 200, count: totals.body.data.series[0][0], users: (await ask('uniques')).body.data.series[0][0] };
}

async function ingest(count: number, through: RunningServer): Promise<void> {
  const events = Array.from({ length: count }, (_, i) => ({ event_type: 'Tapped', user_id: `user-${(sent + i) % 40}`, insert_id: `tap-${sent + i}` }));
  sent += count;
  expect((await postJson(`${through.urls.ingest}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
}

/** Each shard's own events of `Tapped`. */
async function perShard(): Promise<number[]> {
  return Promise.all([0, 1].map(async (shard) => Number(await (await fetch(`${cluster.server(shard).url}/?database=${DATABASE}`, { method: 'POST', body: "SELECT count() FROM events_local WHERE event_type = 'Tapped'" })).text())));
}

const expectCaughtUp = () => expect.poll(async () => (await tapped()).count, { timeout: 60_000, interval: 250 }).toBe(sent);

beforeAll(async () => {
  [cluster, postgres] = await Promise.all([startCluster({ shards: 2 }), startPostgres()]);
  const [first, ...others] = cluster.shardUrls();
  const engine = { engine: 'clickhouse' as const, clickhouseUrl: first![0]!, clickhouseShardUrls: others, clickhouseCluster: cluster.cluster, clickhouseDatabase: DATABASE, postgresUrl: postgres.url };
  h = await startHarness([], engine);
  secondDir = mkdtempSync(join(tmpdir(), 'svc-second-'));
  second = await startServer({ dataDir: secondDir, sharedDir: h.dataDir, host: '127.0.0.1', port: 0, loadIntervalMs: 200, ...engine });
}, 180_000);

afterAll(async () => {
  await second?.close();
  await h?.close();
  await Promise.all([cluster?.stop(), postgres?.stop()]);
  if (secondDir) rmSync(secondDir, { recursive: true, force: true });
});

test('two processes: 40 users are 40 users across the shards, a repeat sent to both counted once', async () => {
  await ingest(200, h.server);
  await ingest(200, second);
  const repeat = { event_type: 'Tapped', user_id: 'user-1', insert_id: 'sent-to-both' };
  for (const server of [h.server, second]) expect((await postJson(`${server.urls.ingest}/batch`, { api_key: h.project.api_key, events: [repeat] })).status).toBe(200);
  sent += 1;
  await expectCaughtUp();
  expect(await tapped()).toMatchObject({ status: 200, count: sent, users: 40 });
  const [first, other] = await perShard();
  expect(first! > 0 && other! > 0).toBe(true);
  expect(first! + other!).toBe(sent);
}, 180_000);

test('the second shard down: reporting 503 with Retry-After, events still acknowledged; back: every event counted once', async () => {
  await cluster.kill(1);
  const answer = await tapped();
  expect(answer).toMatchObject({ status: 503, retryAfter: '5', body: { code: 503 } });
  await ingest(120, h.server);
  await ingest(80, second);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await cluster.restart(1);
  await expectCaughtUp();
  expect(await tapped()).toMatchObject({ count: sent, users: 40 });
  const [first, other] = await perShard();
  expect(first! + other!).toBe(sent);
}, 180_000);
