// Two ClickHouse shards on loopback behind a Distributed table (the README's plan for more
// than one node): events sharded by svc_id, so that each user's events sit on one shard, and
// the reporting scans of the ClickHouse dialect answer through the Distributed table exactly
// as one node holding every event does (distinct users merged across shards, first events
// found per shard).
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ClickHouseServer, startClickHouse } from '../../../../../scripts/clickhouse/start.mjs';
import { ClickHouseDialect } from '../../../src/store/clickhouse/dialect.js';
import type { EventScan } from '../../../src/model/query.js';
import { reportRange } from '../../../src/model/time.js';
import { ClickHouseEvents, type ResolvedEvent } from '../../../src/store/clickhouse/events.js';
import { generateEvents } from '../../reporting/dataset.js';
import { stored } from './engines.js';

const APP = 9;
const START = Date.UTC(2026, 2, 2);
const TIME_ZONE = 'Europe/Berlin';
const RANGE = reportRange(TIME_ZONE, '20260302', '20260331');

let shards: ClickHouseServer[] = [];
let router: ClickHouseServer;
let whole: ClickHouseEvents;
let distributed: ClickHouseEvents;
let direct: ClickHouseClient;
let events: ResolvedEvent[];

/** The dataset's uploads as resolved events: one svc_id per user (or anonymous device), ingestion order as generated. */
function resolved(): ResolvedEvent[] {
  const svcIds = new Map<string, number>();
  return generateEvents({ users: 300, startMs: START, days: 30 }).map((upload, i) => {
    const who = upload.user_id ?? `device:${upload.device_id}`;
    if (!svcIds.has(who)) svcIds.set(who, svcIds.size + 1);
    return { ...stored(upload, i, APP, START), svc_id: svcIds.get(who)!, ingest_seq: i + 1 };
  });
}

beforeAll(async () => {
  shards = await Promise.all([startClickHouse(), startClickHouse()]);
  // The router holds no events of its own: a Distributed table over the two shards, and, to compare, one node's worth of them.
  router = await startClickHouse({
    clusters: { svc_shards: shards.map((shard) => shard.tcpPort) },
    // Inserts reach the shards before they return; IN subqueries stay on each shard (correct: a user's events are on one).
    settings: { insert_distributed_sync: 1, distributed_product_mode: 'local' },
  });
  for (const shard of shards) await (await ClickHouseEvents.open({ url: shard.url, database: 'svc' })).close();
  whole = await ClickHouseEvents.open({ url: router.url, database: 'svc' });
  direct = createClient({ url: router.url });
  await direct.command({ query: 'CREATE DATABASE IF NOT EXISTS spread' });
  await direct.command({ query: 'CREATE TABLE IF NOT EXISTS spread.events AS svc.events ENGINE = Distributed(svc_shards, svc, events, intHash64(assumeNotNull(svc_id)))' });
  distributed = await ClickHouseEvents.open({ url: router.url, database: 'spread' });
  events = resolved();
  await whole.insert(events);
  await distributed.insert(events);
}, 120_000);

afterAll(async () => {
  await Promise.all([whole?.close(), distributed?.close(), direct?.close()]);
  await Promise.all([router, ...shards].map((server) => server?.stop()));
});

test('each shard holds a part of the events, and each user on one shard only', async () => {
  const perShard = await Promise.all(
    shards.map(async (shard) => {
      const client = createClient({ url: shard.url, database: 'svc' });
      const rows = await (await client.query({ query: 'SELECT DISTINCT svc_id FROM events', format: 'JSONEachRow' })).json<{ svc_id: string }>();
      const [count] = await (await client.query({ query: 'SELECT count() AS n FROM events', format: 'JSONEachRow' })).json<{ n: string }>();
      await client.close();
      return { users: new Set(rows.map((row) => Number(row.svc_id))), events: Number(count!.n) };
    }),
  );
  expect(perShard.every((shard) => shard.events > events.length / 4)).toBe(true);
  expect(perShard[0]!.events + perShard[1]!.events).toBe(events.length);
  expect([...perShard[0]!.users].filter((svcId) => perShard[1]!.users.has(svcId))).toEqual([]);
});

const dialect = new ClickHouseDialect();
const scan = (overrides: Partial<EventScan>): EventScan => ({ appId: APP, timeZone: TIME_ZONE, range: RANGE, segment: [], properties: [], interval: 'day', ...overrides });
const QUESTIONS: [string, string][] = [
  ['active users per day', `SELECT ${dialect.bucketLabel('bucket', 'day')} AS label, uniqExact(svc_id) AS n FROM (${dialect.scan(scan({ selector: { eventType: '_active', conditions: [] } }))}) GROUP BY bucket`],
  ['users over the whole range by country', `SELECT p0, uniqExact(svc_id) AS n FROM (${dialect.scan(scan({ selector: { eventType: '_all', conditions: [] }, properties: [{ kind: 'builtIn', name: 'country' }] }))}) GROUP BY p0`],
  ['events per week by event type', `SELECT ${dialect.bucketLabel('bucket', 'week')} AS label, event_type, count() AS n FROM (${dialect.scan(scan({ interval: 'week', selector: { eventType: '_all', conditions: [] } }))}) GROUP BY bucket, event_type`],
  ['new users per day (first events, per shard)', `SELECT ${dialect.bucketLabel('bucket', 'day')} AS label, uniqExact(svc_id) AS n FROM (${dialect.scan(scan({ selector: { eventType: '_all', conditions: [] }, firstEventsOnly: true }))}) GROUP BY bucket`],
];

for (const [question, sql] of QUESTIONS) {
  test(`${question}: two shards answer as one node`, async () => {
    const order = (rows: Record<string, unknown>[]) => rows.map((row) => JSON.stringify(row)).sort();
    const expected = order(await whole.query(sql));
    expect(expected.length).toBeGreaterThan(1);
    expect(order(await distributed.query(sql))).toEqual(expected);
  });
}

test('the comparison can fail: one shard alone does not answer as one node', async () => {
  const [, sql] = QUESTIONS[0]!;
  const client = createClient({ url: shards[0]!.url, database: 'svc', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  const part = await (await client.query({ query: sql, format: 'JSONEachRow' })).json<Record<string, unknown>>();
  await client.close();
  expect(part).not.toEqual(await whole.query(sql));
});
