// ClickHouse 18.16 beside DuckDB on the same seeded events (default 1,000,000 events, 30 days,
// 50,000 users, 20 event types of skewed frequency, JSON properties): load rate (ClickHouse: the RowBinary insert
// path, and JSONEachRow for comparison; DuckDB: its journal-segment loader), disk size, and
// warm query medians of segmentation-style scans printed by each engine's dialect; then the
// same ClickHouse queries on tables with other sorting keys.
//   npx turbo run build --filter=@svc/server && node scripts/clickhouse/bench.mjs [--events 1000000] [--runs 5]
import { mkdtempSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from '@clickhouse/client';
import { ClickHouseEvents } from '../../packages/server/dist/store/clickhouse/events.js';
import { ClickHouseDialect } from '../../packages/server/dist/store/clickhouse/dialect.js';
import { DuckDbDialect } from '../../packages/server/dist/store/duckdb/dialect.js';
import { DuckDbEngine } from '../../packages/server/dist/store/duckdb/engine.js';
import { EVENT_COLUMNS } from '../../packages/server/dist/store/journal-line.js';
import { startClickHouse } from './start.mjs';

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' }, users: { type: 'string', default: '50000' }, runs: { type: 'string', default: '5' } } });
const [EVENTS, USERS, RUNS] = [values.events, values.users, values.runs].map(Number);
const APP = 1;
const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 1);
const EVENT_TYPES = Array.from({ length: 20 }, (_, i) => `Event ${String.fromCharCode(65 + i)}`);
const COUNTRIES = ['United States', 'Germany', 'France', 'India', 'Brazil', 'Japan', 'Canada', 'Spain', 'Italy', 'Mexico'];
const PLANS = ['free', 'pro', 'team', 'enterprise'];

/** A deterministic uniform value in [0, 1) of an event index and a salt (a multiplicative hash). */
function uniform(index, salt) {
  let h = Math.imul(index ^ salt, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  return ((h ^ (h >>> 13)) >>> 0) / 4294967296;
}

/** Resolved events (svc_id = user index + 1), in ingestion order. */
function* events() {
  const empty = Object.fromEntries(Object.keys(EVENT_COLUMNS).map((name) => [name, null]));
  for (let i = 0; i < EVENTS; i++) {
    const user = Math.floor(uniform(i, 1) * USERS);
    // Skewed: the first event types are the most frequent.
    const type = EVENT_TYPES[Math.floor(uniform(i, 2) ** 2 * EVENT_TYPES.length)];
    yield {
      ...empty,
      app_id: APP,
      insert_id: `i-${i}`,
      event_type: type,
      user_id: `user-${user}`,
      device_id: `device-${user}`,
      time: START + Math.floor(uniform(i, 3) * 30 * DAY),
      server_upload_time: START + 30 * DAY + i,
      session_id: START + user,
      event_properties: { plan: PLANS[user % 4], item: `item-${Math.floor(uniform(i, 4) * 500)}`, price: Math.round(uniform(i, 5) * 10000) / 100, nested: { depth: 1 } },
      skip_user_properties_sync: false,
      country: COUNTRIES[user % COUNTRIES.length],
      platform: ['iOS', 'Android', 'Web'][user % 3],
      svc_id: user + 1,
      ingest_seq: i + 1,
    };
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function timed(run) {
  await run();
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return median(times);
}

const range = { startMs: START, endMs: START + 30 * DAY };
const QUERIES = {
  'a uniques/day of one type': (d) => `SELECT ${d.bucketLabel('bucket', 'day')} AS day, count(DISTINCT svc_id) AS n FROM (${d.scan({ appId: APP, timeZone: 'America/New_York', range, segment: [], properties: [], interval: 'day', selector: { eventType: 'Event E', conditions: [] } })}) GROUP BY bucket`,
  'b same by a property': (d) =>
    `SELECT ${d.bucketLabel('bucket', 'day')} AS day, p0, count(DISTINCT svc_id) AS n FROM (${d.scan({ appId: APP, timeZone: 'America/New_York', range, segment: [], properties: [{ kind: 'event', name: 'item' }], interval: 'day', selector: { eventType: 'Event E', conditions: [] } })}) GROUP BY bucket, p0`,
  'd uniques per country': (d) => `SELECT p0, count(DISTINCT svc_id) AS n FROM (${d.scan({ appId: APP, timeZone: 'UTC', range, segment: [], properties: [{ kind: 'builtIn', name: 'country' }], selector: { eventType: '_active', conditions: [] } })}) GROUP BY p0`,
  'e totals/day all events, a condition': (d) =>
    `SELECT ${d.bucketLabel('bucket', 'day')} AS day, count(*) AS n FROM (${d.scan({ appId: APP, timeZone: 'UTC', range, segment: [], properties: [], interval: 'day', selector: { eventType: '_all', conditions: [{ property: { kind: 'event', name: 'plan' }, op: 'is', values: ['pro'] }] } })}) GROUP BY bucket`,
};

const results = [];
const clickhouse = await startClickHouse({ keep: Boolean(process.env.KEEP) });
const dir = mkdtempSync(join(tmpdir(), 'svc-ch-bench-'));
try {
  console.error(`clickhouse-server answered after ${Math.round(clickhouse.startMs)} ms`);
  const all = [...events()];
  const ch = await ClickHouseEvents.open({ url: clickhouse.url, database: 'bench' });
  const batch = 100_000;
  let started = performance.now();
  for (let i = 0; i < all.length; i += batch) await ch.insert(all.slice(i, i + batch));
  const rowBinaryRate = all.length / ((performance.now() - started) / 1000);
  const client = createClient({ url: clickhouse.url, database: 'bench', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  await client.command({ query: 'CREATE TABLE events_json AS events' });
  started = performance.now();
  for (let i = 0; i < all.length; i += batch) {
    const rows = all.slice(i, i + batch).map((e) => ({
      ...e,
      event_properties: JSON.stringify(e.event_properties),
      skip_user_properties_sync: 0,
    }));
    await client.insert({ table: 'events_json', values: rows, format: 'JSONEachRow' });
  }
  const jsonRate = all.length / ((performance.now() - started) / 1000);
  await client.command({ query: 'OPTIMIZE TABLE events FINAL' });
  const [size] = await ch.query("SELECT sum(bytes_on_disk) AS bytes FROM system.parts WHERE database = 'bench' AND table = 'events' AND active");

  // DuckDB through its segment loader (svc_id resolved by its identities, so the same users).
  const duck = await DuckDbEngine.open(dir);
  let loading = 0;
  for (let i = 0; i < all.length; i += 250_000) {
    const segment = join(dir, `segment-${i}.jsonl`);
    writeFileSync(segment, `${all.slice(i, i + 250_000).map((e) => duck.journalLine(e)).join('\n')}\n`);
    started = performance.now();
    await duck.loadSegment(segment, `segment-${i}`);
    loading += performance.now() - started;
    rmSync(segment);
  }
  const duckRate = all.length / (loading / 1000);

  const chDialect = new ClickHouseDialect({ timeZone: 'UTC' });
  const duckDialect = new DuckDbDialect({ userMappings: false });
  for (const [name, sql] of Object.entries(QUERIES)) {
    const row = { query: name, duckdb: await timed(() => duck.query(sql(duckDialect))), clickhouse: await timed(() => ch.query(sql(chDialect))) };
    // Same answers (sorted rows) on both.
    const canon = (rows) => rows.map((r) => JSON.stringify(r)).sort().join('\n');
    row.same = canon(await duck.query(sql(duckDialect))) === canon(await ch.query(sql(chDialect)));
    results.push(row);
  }
  // Other sorting keys for the same rows.
  const keys = { '(app_id, time)': '(app_id, time)', '(app_id, event_type, svc_id, time)': '(app_id, event_type, assumeNotNull(svc_id), time)' };
  const other = {};
  for (const [label, key] of Object.entries(keys)) {
    const table = `events_${Object.keys(other).length}`;
    await client.command({ query: `CREATE TABLE ${table} AS events ENGINE = MergeTree() PARTITION BY toYYYYMM(toDateTime(intDiv(time, 1000))) ORDER BY ${key}` });
    await client.command({ query: `INSERT INTO ${table} SELECT * FROM events` });
    await client.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
    other[label] = table;
  }
  for (const row of results) {
    for (const [label, table] of Object.entries(other)) {
      const sql = QUERIES[row.query](chDialect).replace('FROM events AS e', `FROM ${table} AS e`);
      row[label] = await timed(() => ch.query(sql));
    }
  }
  await duck.close();
  const duckBytes = statSync(join(dir, 'events.duckdb')).size;
  console.log(`${EVENTS.toLocaleString('en')} events, ${USERS.toLocaleString('en')} users; 2 cores`);
  console.log(`load: ClickHouse RowBinary ${Math.round(rowBinaryRate).toLocaleString('en')} events/s, JSONEachRow ${Math.round(jsonRate).toLocaleString('en')} events/s (batches of ${batch.toLocaleString('en')}); DuckDB segment loader ${Math.round(duckRate).toLocaleString('en')} events/s`);
  console.log(`disk: ClickHouse events ${(size.bytes / 1e6).toFixed(0)} MB; DuckDB file ${(duckBytes / 1e6).toFixed(0)} MB`);
  console.log(`warm medians of ${RUNS} (ms); ClickHouse key (app_id, event_type, time) unless named`);
  console.table(results.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' ? Math.round(v) : v]))));
  await ch.close();
  await client.close();
} finally {
  await clickhouse.stop();
  rmSync(dir, { recursive: true, force: true });
}
