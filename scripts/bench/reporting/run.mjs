// Reporting benchmark: a seeded dataset (default 10 million events, 30 days, 200,000 users)
// loaded through the journal loader into a fresh data directory, then each reporting
// operation timed through the server's HTTP path (warm: median of 5 and p95) next to the
// same question asked as hand-written SQL on the same DuckDB file, with their ratio; then
// the longest event-loop stall of the server (in a process of its own) while queries run and
// ingestion continues.
// The server runs with the documented limits raised (the benchmark's queries would exceed
// the cost budget); --keep DIR keeps the loaded data directory and reuses it next time.
//   node scripts/bench/reporting/run.mjs [--events 10000000] [--users 200000] [--runs 5] [--keep DIR] [--only NAME] [--stall-only] [--stall-flags FLAGS]
// --only runs the operations whose name contains NAME; --stall-only skips their timing and
// measures only the event-loop stalls; --stall-flags adds Node flags to the stall phase's server
// (--stall-flags="--cpu-prof --trace-gc").
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { DuckDbEngine } from '../../../packages/server/dist/store/duckdb.js';
import { startServer, Tenancy } from '../../../packages/server/dist/index.js';
import { serverFlags, withServerFlags } from '../support/server-flags.mjs';

// The server runs in this process: with the Node flags it runs with on its own.
withServerFlags();

const { values } = parseArgs({ options: { events: { type: 'string', default: '10000000' }, users: { type: 'string', default: '200000' }, runs: { type: 'string', default: '5' }, keep: { type: 'string' }, only: { type: 'string', default: '' }, 'stall-only': { type: 'boolean', default: false }, 'stall-flags': { type: 'string', default: '' } } });
const EVENTS = Number(values.events);
const USERS = Number(values.users);
const RUNS = Number(values.runs);
const DAYS = 30;
const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 1);
const EVENT_TYPES = ['Song Played', 'Add to Cart', 'Checkout', 'Purchase', 'Search', 'View Item', 'Share', 'Like', 'Follow', 'Comment', 'Login', 'Logout', 'Open App', 'Close App', 'Rate', 'Subscribe', 'Unsubscribe', 'Invite', 'Upload', 'Download'];
const COUNTRIES = ['United States', 'Germany', 'France', 'India', 'Brazil', 'Japan', 'Canada', 'Spain', 'Italy', 'Mexico'];

/** mulberry32: a small seeded PRNG. */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const dataDir = values.keep ?? mkdtempSync(join(tmpdir(), 'svc-bench-reporting-'));
mkdirSync(dataDir, { recursive: true });
const reuse = existsSync(join(dataDir, 'events.duckdb'));
const tenancy = new Tenancy(dataDir);
const project = reuse ? tenancy.projects[0] : tenancy.createProject(tenancy.createOrganization('Bench').id, 'Bench');
// The ingestion that runs beside the queries goes to a project of its own: a kept dataset stays as loaded.
const live = tenancy.projects[1] ?? tenancy.createProject(project.org_id, 'Live');

async function load() {
  const next = random(42);
  const engine = await DuckDbEngine.open(dataDir);
  const started = performance.now();
  const perSegment = 250_000;
  for (let offset = 0, segment = 0; offset < EVENTS; offset += perSegment, segment++) {
    const lines = [];
    for (let i = offset; i < Math.min(EVENTS, offset + perSegment); i++) {
      const user = Math.floor(next() ** 1.5 * USERS);
      const time = START + Math.floor(next() * DAYS * DAY);
      // Funnel-shaped: most users' events follow View Item → Add to Cart → Purchase now and then.
      const type = next() < 0.3 ? ['View Item', 'Add to Cart', 'Purchase'][Math.floor(next() ** 2 * 3)] : EVENT_TYPES[Math.floor(next() * EVENT_TYPES.length)];
      lines.push(
        engine.journalLine({
          app_id: project.app_id,
          insert_id: `b-${i}`,
          event_type: type,
          user_id: `user-${user}`,
          device_id: `device-${user}`,
          time,
          server_upload_time: time,
          session_id: time - (time % 1_800_000),
          event_properties: { item_id: `sku-${Math.floor(next() * 500)}`, price_tier: Math.floor(next() * 4) },
          country: COUNTRIES[user % COUNTRIES.length],
          platform: user % 3 === 0 ? 'iOS' : 'Android',
          app_version: `1.${user % 7}`,
          skip_user_properties_sync: false,
        }),
      );
    }
    const path = join(dataDir, `bench-${segment}.ndjson`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    await engine.loadSegment(path, `bench-${segment}`);
    rmSync(path);
  }
  const seconds = (performance.now() - started) / 1000;
  await engine.close();
  return seconds;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function time(run) {
  await run(); // warm-up
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

const loadSeconds = reuse ? undefined : await load();
const unlimited = { concurrentRequests: 1000, costPerFiveMinutes: Number.MAX_SAFE_INTEGER, costPerHour: Number.MAX_SAFE_INTEGER };
const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, logger: false, reportingLimits: unlimited });
const auth = { authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}` };
const range = 'start=20261001&end=20261030';
const e = (spec) => encodeURIComponent(JSON.stringify(spec));
const get = async (path) => {
  const answer = await fetch(`${server.urls.app}${path}`, { headers: auth });
  if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${await answer.text()}`);
  return answer.json();
};
const sql = (query) => () => server.store.query(query);
const inRange = `app_id = ${project.app_id} AND time >= ${START} AND time < ${START + DAYS * DAY}`;
const day = 'date_trunc(\'day\', make_timestamp(time * 1000))';

const allCases = [
  // The hand-written SQL answers the same question: per day and over the whole range (`seriesCollapsed`).
  ['segmentation uniques/day', `/api/2/events/segmentation?${range}&e=${e({ event_type: 'Song Played' })}`, `SELECT ${day} AS d, count(DISTINCT svc_id) FROM events WHERE ${inRange} AND event_type = 'Song Played' GROUP BY GROUPING SETS ((d), ())`],
  [
    'segmentation by item_id, top 100',
    `/api/2/events/segmentation?${range}&e=${e({ event_type: 'Song Played', group_by: [{ type: 'event', value: 'item_id' }] })}&limit=100`,
    `SELECT ${day} AS d, event_properties->>'item_id' AS g, count(DISTINCT svc_id) FROM events WHERE ${inRange} AND event_type = 'Song Played' GROUP BY GROUPING SETS ((d, g), (g))`,
  ],
  [
    '3-step funnel (1 day window)',
    `/api/2/funnels?${range}&e=${e({ event_type: 'View Item' })}&e=${e({ event_type: 'Add to Cart' })}&e=${e({ event_type: 'Purchase' })}&cs=86400`,
    `WITH s AS (SELECT svc_id, time, event_type FROM events WHERE ${inRange} AND event_type IN ('View Item', 'Add to Cart', 'Purchase')),
     a AS (SELECT svc_id, min(time) AS t FROM s WHERE event_type = 'View Item' GROUP BY svc_id),
     b AS (SELECT a.svc_id, a.t, min(s.time) AS t2 FROM a JOIN s ON s.svc_id = a.svc_id AND s.event_type = 'Add to Cart' AND s.time > a.t AND s.time <= a.t + 86400000 GROUP BY ALL),
     c AS (SELECT b.svc_id FROM b JOIN s ON s.svc_id = b.svc_id AND s.event_type = 'Purchase' AND s.time > b.t2 AND s.time <= b.t + 86400000 GROUP BY ALL)
     SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM b), (SELECT count(*) FROM c)`,
  ],
  ['active users/day', `/api/2/users?${range}`, `SELECT ${day} AS d, count(DISTINCT svc_id) FROM events WHERE ${inRange} AND event_type NOT IN ('$identify', '$groupidentify') GROUP BY GROUPING SETS ((d), ())`],
  ['composition by country', `/api/2/composition?${range}&p=country`, `SELECT c, count(*) FROM (SELECT svc_id, arg_max(country, ingest_seq) AS c FROM events WHERE ${inRange} GROUP BY svc_id) GROUP BY c`],
  [
    'session length distribution',
    `/api/2/sessions/length?${range}`,
    `SELECT count(*) FILTER (WHERE l < 60000), count(*) FILTER (WHERE l >= 60000) FROM (SELECT svc_id, session_id, least(max(time) - session_id, ${DAY}) AS l FROM events
     WHERE app_id = ${project.app_id} AND session_id >= ${START} AND session_id < ${START + DAYS * DAY} GROUP BY svc_id, session_id HAVING bool_or(event_type NOT IN ('$identify', '$groupidentify')))`,
  ],
  ['event types list', '/api/2/events/list', `SELECT event_type, count(*) FROM events WHERE app_id = ${project.app_id} GROUP BY event_type`],
];

const cases = allCases.filter(([name]) => name.includes(values.only));

const [{ n: stored }] = await server.store.query(`SELECT count(*) AS n FROM events WHERE app_id = ${project.app_id}`);
console.log(
  `dataset: ${stored.toLocaleString()} events, ${USERS.toLocaleString()} users, ${DAYS} days; ${loadSeconds === undefined ? `reused ${dataDir}` : `loaded through the journal loader in ${loadSeconds.toFixed(0)} s (${((loadSeconds * 1e6) / EVENTS).toFixed(1)} µs/event, generation included)`}`,
);
const timed = values['stall-only'] ? [] : cases;
if (timed.length > 0) console.log('| operation | p50 ms | p95 ms | hand-written SQL p50 ms | ratio |\n|---|---|---|---|---|');
for (const [name, path, query] of timed) {
  try {
    const api = await time(() => get(path));
    const raw = await time(sql(query));
    console.log(`| ${name} | ${api.p50.toFixed(0)} | ${api.p95.toFixed(0)} | ${raw.p50.toFixed(0)} | ${(api.p50 / raw.p50).toFixed(2)} |`);
  } catch (error) {
    console.log(`| ${name} | failed: ${error.message} | | | |`);
  }
}

// The event loop while queries run and ingestion continues, in a server process of its own
// (this one holds the benchmark's garbage): each stall over 20 ms is listed with the garbage
// collection inside it, so a stall is told apart as GC or work.
await server.close();
const stallServer = fork(fileURLToPath(new URL('./stall-server.mjs', import.meta.url)), [dataDir], { execArgv: [...serverFlags(), ...values['stall-flags'].split(/\s+/).filter(Boolean)] });
const { urls } = await new Promise((resolve) => stallServer.once('message', resolve));
// The ingestion client runs in a worker thread: building and sending batches stays off this
// process's event loop, which drives the queries.
const ingestClient = new Worker(
  `const { parentPort, workerData } = require('node:worker_threads');
  let ingesting = true;
  parentPort.once('message', () => (ingesting = false));
  (async () => {
    let batches = 0;
    for (; ingesting; batches++) {
      const events = Array.from({ length: 500 }, (_, i) => ({ event_type: 'Live', user_id: 'live-' + i, insert_id: workerData.run + '-' + batches + '-' + i }));
      await fetch(workerData.url + '/batch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: workerData.apiKey, events }) });
    }
    parentPort.postMessage(batches);
  })();`,
  { eval: true, workerData: { url: urls.ingest, apiKey: live.api_key, run: `live-${Date.now()}` } },
);
stallServer.send('watch');
for (const [, path] of cases) await fetch(`${urls.app}${path}`, { headers: auth }).then((answer) => answer.arrayBuffer());
const ingested = new Promise((resolve) => ingestClient.once('message', resolve));
ingestClient.postMessage('stop');
const batches = await ingested;
await ingestClient.terminate();
const report = new Promise((resolve) => stallServer.once('message', resolve));
stallServer.send('report');
const { maxMs, p99Ms, stalls, ownMaxMs, longest, longestOwn, heapMb } = await report;
console.log(`\nevent loop of the server process during the queries, with ${batches} ingestion batches of 500 in between: max stall ${maxMs.toFixed(1)} ms, p99 ${p99Ms.toFixed(1)} ms; heap ${heapMb.toFixed(0)} MB`);
const described = (list) => list.map((stall) => `${stall.ms.toFixed(0)}: ${stall.gcMs.toFixed(0)} / ${stall.ranMs.toFixed(0)} / ${stall.waitMs.toFixed(0)} / ${Math.max(0, stall.ms - stall.ranMs - stall.waitMs).toFixed(0)}`).join(', ') || 'none';
console.log(`stalls over 20 ms: ${stalls}; longest without the waits for a CPU: ${ownMaxMs.toFixed(0)} ms\n(ms: GC / running / waiting for a CPU / blocked) longest: ${described(longest)}; longest without the waits: ${described(longestOwn)}`);
if (!values.keep) rmSync(dataDir, { recursive: true, force: true });
