// Soak: the server (its own process, as `svc-server start` runs) ingesting at a steady rate
// while a rotating mix of reporting queries over yesterday (seeded with --seed-events before
// the clock starts) runs a few times a second, for --minutes. Every
// --row-seconds it prints a row: the server's and the engine's RSS (VmRSS of the server and of
// its child processes; ClickHouse's own server beside), the server's JS heap used and the
// engine's ArrayBuffers (a probe loaded with --import writes them to files: the server does
// not expose them), the journal backlog (segments on disk not loaded yet, the open one
// included) and the window's p99 latencies and answers by status. At the end: memory after the
// warm-up and at the end, the slope per 10 minutes of its floor (each minute's least: a segment's
// load takes a few hundred MB for seconds and gives them back, so single samples swing with
// whether one ran; a leak raises the floor), and a verdict against the targets (memory flat
// after the warm-up, backlog bounded, no errors).
// What memory holds by design, so that "flat" is judged on the rest:
// - the insert_id window (7 days by default, ~100 bytes an id: at 2000 events/s ~12 MB a
//   minute for a week): the server runs with --insert-id-window-hours (default 0.02, 72 s);
// - DuckDB's buffer cache, which keeps data blocks up to its memory limit (80% of RAM by
//   default): the server runs with --duckdb-memory-limit (default 256MB), reached within the
//   warm-up;
// - the engine's per-user timelines (DuckDB), an in-memory index of stored events (20-45 bytes
//   an event, its ArrayBuffers): the server runs with --timeline-memory (default 48MB), passed
//   within the warm-up, after which the project's funnels and counts are SQL;
// - (not memory) --engine-nice: the engine process runs at idle priority, as the server's
//   default, so any other work on the machine comes first; a soak on a machine shared with
//   other work runs it at 0 (and the other work at idle priority) to measure the server alone;
// - ClickHouse's mark and uncompressed caches (512 MB each in scripts/clickhouse), read from its
//   asynchronous metrics.
//   node scripts/bench/soak/run.mjs [--engine duckdb|clickhouse] [--minutes 30] [--events-per-second 2000] [--queries-per-second 2 (DuckDB) | 0.5 (ClickHouse)] [--warmup-minutes 10] [--row-seconds 30] [--insert-id-window-hours 0.02] [--duckdb-memory-limit 256MB] [--timeline-memory 48MB] [--seed-events 1000000] [--engine-nice idle|N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startServerProcess } from '../support/server-process.mjs';
import { clickhouseMemory, journalBacklog, memoryOf } from './measure.mjs';
import { dayOf, ingestLoop, reportingLoop, seedDay } from './traffic.mjs';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'duckdb' },
    minutes: { type: 'string', default: '30' },
    'events-per-second': { type: 'string', default: '2000' },
    'queries-per-second': { type: 'string' },
    'warmup-minutes': { type: 'string', default: '10' },
    'row-seconds': { type: 'string', default: '30' },
    'insert-id-window-hours': { type: 'string', default: '0.02' },
    'duckdb-memory-limit': { type: 'string', default: '256MB' },
    'timeline-memory': { type: 'string', default: '48MB' },
    'seed-events': { type: 'string', default: '1000000' },
    'engine-nice': { type: 'string', default: 'idle' },
  },
});
const MINUTES = Number(values.minutes);
// A steady state, not a load test: on this 2-core machine ClickHouse answers about one query a
// second over the seeded day beside the loads (docs/performance.md), so it gets half that.
const QUERIES_PER_SECOND = Number(values['queries-per-second'] ?? (values.engine === 'clickhouse' ? 0.5 : 2));
const WARMUP_MS = Number(values['warmup-minutes']) * 60_000;
const ROW_MS = Number(values['row-seconds']) * 1000;
/** Memory is sampled this often; rows print the latest sample, the slope fits each minute's least after the warm-up. */
const SAMPLE_MS = 5_000;
/** Flat memory: RSS grows by less than this per 10 minutes after the warm-up. */
const FLAT_MB_PER_10_MIN = 20;

const probeDir = mkdtempSync(join(tmpdir(), 'svc-soak-'));
const heapFile = join(probeDir, 'heap.json');
const serverLog = [];
const server = await startServerProcess({
  engine: values.engine,
  engineNice: values['engine-nice'] === 'idle' ? 'idle' : Number(values['engine-nice']),
  nodeArgs: ['--import', fileURLToPath(new URL('./heap-probe.mjs', import.meta.url))],
  serverArgs: ['--insert-id-window-hours', values['insert-id-window-hours'], ...(values.engine === 'duckdb' ? ['--duckdb-memory-limit', values['duckdb-memory-limit'], '--timeline-memory', values['timeline-memory']] : [])],
  env: { ...process.env, SVC_SOAK_HEAP_FILE: heapFile },
  // The server's log is kept (its end printed with the verdict), not mixed into the rows.
  onStderr: (chunk) => {
    for (const line of chunk.toString().split('\n')) if (line.trim() && !/^\s+at /.test(line) && serverLog.push(line) > 20) serverLog.shift();
  },
});
console.log(
  `soak: ${server.engine}, ${MINUTES} min, ${values['events-per-second']} events/s, ${QUERIES_PER_SECOND} queries/s, warm-up ${WARMUP_MS / 60_000} min, insert_id window ${values['insert-id-window-hours']} h, engine process at ${values['engine-nice'] === 'idle' ? 'idle priority' : `niceness ${values['engine-nice']}`}${values.engine === 'duckdb' ? `, DuckDB memory limit ${values['duckdb-memory-limit']}, timelines at most ${values['timeline-memory']}` : ''}; server pid ${server.child.pid}${server.clickhousePid ? `, ClickHouse pid ${server.clickhousePid}` : ''}`,
);

const yesterdayMs = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 86_400_000;
const seeding = performance.now();
await seedDay(server, yesterdayMs, Number(values['seed-events']));
console.log(`seeded ${values['seed-events']} events on ${dayOf(yesterdayMs)}, all queryable after ${((performance.now() - seeding) / 1000).toFixed(0)} s`);
const ingest = ingestLoop(server, Number(values['events-per-second']));
const reporting = reportingLoop(server, QUERIES_PER_SECOND, dayOf(yesterdayMs));
const started = performance.now();
const elapsed = () => performance.now() - started;
const samples = [];
const sample = async () => {
  const atMs = elapsed();
  const memory = memoryOf(server.child.pid, server.clickhousePid, heapFile);
  const clickhouse = server.clickhouseUrl === undefined ? undefined : await clickhouseMemory(server.clickhouseUrl);
  samples.push({ atMs, ...memory, clickhouseCaches: clickhouse?.caches, clickhouse, events: ingest.events(), backlog: journalBacklog(server.dataDir) });
};
const mb = (bytes) => (bytes === undefined ? '-' : (bytes / 2 ** 20).toFixed(0));
const statuses = (counts) => Object.entries(counts).map(([status, n]) => `${status}:${n}`).join(' ') || '-';

console.log('elapsed | server RSS MB | engine RSS MB | ClickHouse RSS MB | ClickHouse caches MB | server JS heap MB | server ArrayBuffers MB | engine JS heap MB | engine ArrayBuffers MB | journal segments / MB | ingest p99 ms | reporting p99 ms | ingest answers | reporting answers');
const sampler = setInterval(sample, SAMPLE_MS);
await sample();
const printRow = () => {
  const last = samples.at(-1);
  const [i, r] = [ingest.window(), reporting.window()];
  console.log(
    `${(elapsed() / 1000).toFixed(0).padStart(5)} s | ${mb(last.serverRss)} | ${mb(last.engineRss)} | ${mb(last.clickhouseRss)} | ${mb(last.clickhouseCaches)} | ${mb(last.heapUsed)} | ${mb(last.arrayBuffers)} | ${mb(last.engineHeapUsed)} | ${mb(last.engineArrayBuffers)} | ${last.backlog.segments} / ${mb(last.backlog.bytes)} | ${i.p99.toFixed(0)} | ${r.p99.toFixed(0)} | ${statuses(i.statuses)} | ${statuses(r.statuses)}`,
  );
};
const printer = setInterval(printRow, ROW_MS);
await new Promise((resolve) => setTimeout(resolve, MINUTES * 60_000));
clearInterval(printer);
clearInterval(sampler);
await sample();
printRow();
await Promise.all([ingest.stop(), reporting.stop()]);
const exited = server.child.exitCode !== null || server.child.signalCode !== null;
await server.stop();
rmSync(probeDir, { recursive: true, force: true });

// The verdict: memory after the warm-up (first sample at or after it) and at the end, the
// least-squares slope of each minute's least judged memory since, the backlog bounded when its largest after the
// warm-up is at most twice its largest before (or 64 MB), and every answer that was not a 2xx
// (or no answer) an error.
const after = samples.filter((s) => s.atMs >= WARMUP_MS);
/** The memory judged: every process's RSS but ClickHouse's caches. */
const judgedOf = (s) => s.serverRss + (s.engineRss ?? 0) + (s.clickhouseRss ?? 0) - (s.clickhouseCaches ?? 0);
/** Least-squares slope of `valueOf` against `xOf` over the points. */
function slopeOf(points, xOf, valueOf) {
  if (points.length < 2) return NaN;
  const xs = points.map(xOf);
  const ys = points.map(valueOf);
  const [mx, my] = [xs.reduce((a, b) => a + b) / xs.length, ys.reduce((a, b) => a + b) / ys.length];
  const num = xs.reduce((sum, x, k) => sum + (x - mx) * (ys[k] - my), 0);
  const den = xs.reduce((sum, x) => sum + (x - mx) ** 2, 0);
  return num / den;
}
const [first, last] = [after[0], after.at(-1)];
/** Each minute's sample of the least judged memory. */
const floorOfMinute = new Map();
for (const s of after) {
  const minute = Math.floor(s.atMs / 60_000);
  if (!floorOfMinute.has(minute) || judgedOf(s) < judgedOf(floorOfMinute.get(minute))) floorOfMinute.set(minute, s);
}
const floors = [...floorOfMinute.values()];
const slope = slopeOf(floors, (p) => p.atMs / 600_000, judgedOf) / 2 ** 20;
const maxBacklog = (list) => Math.max(0, ...list.map((s) => s.backlog.bytes));
const backlogBounded = after.length > 0 && maxBacklog(after) <= Math.max(maxBacklog(samples.filter((s) => s.atMs < WARMUP_MS)) * 2, 64 * 2 ** 20);
const errors = ingest.errors() + reporting.errors();
const flat = Number.isFinite(slope) && slope < FLAT_MB_PER_10_MIN;
const describe = (s) => (s ? `server ${mb(s.serverRss)} MB, engine ${mb(s.engineRss)} MB${s.clickhouseRss === undefined ? '' : `, ClickHouse ${mb(s.clickhouseRss)} MB (caches ${mb(s.clickhouseCaches)} MB)`}, JS heap ${mb(s.heapUsed)} MB, ArrayBuffers ${mb(s.arrayBuffers)} MB, engine JS heap ${mb(s.engineHeapUsed)} MB, engine ArrayBuffers ${mb(s.engineArrayBuffers)} MB (at ${(s.atMs / 1000).toFixed(0)} s)` : 'none (the run ended within the warm-up)');
console.log(`\nsent: ${ingest.sent()} ingestion batches (${ingest.events()} events, ${(ingest.events() / (MINUTES * 60)).toFixed(0)}/s), ${reporting.sent()} reporting queries; answers: ingestion ${statuses(ingest.totals())}, reporting ${statuses(reporting.totals())}`);
console.log(`memory after the warm-up: ${describe(first)}\nmemory at the end: ${describe(last)}`);
/** Where ClickHouse's memory is: what its queries and merges hold, its parts and their primary keys. */
const holders = (c) => `queries and merges ${mb(c.tracked)} MB, primary keys ${mb(c.primaryKeys)} MB of ${c.parts} active parts, ${c.outdatedParts} outdated parts`;
if (first?.clickhouse && last?.clickhouse) console.log(`ClickHouse after the warm-up: ${holders(first.clickhouse)}\nClickHouse at the end: ${holders(last.clickhouse)}`);
console.log(`slope of RSS (server + engine${server.clickhousePid ? " + ClickHouse, less ClickHouse's caches" : ''}) after the warm-up, of its floor (each minute's least): ${Number.isFinite(slope) ? slope.toFixed(1) : '-'} MB per 10 min over ${floors.length} minutes (${mb(judgedOf(floors[0] ?? {}))} MB to ${mb(judgedOf(floors.at(-1) ?? {}))} MB); journal backlog largest ${mb(maxBacklog(after))} MB after the warm-up`);
console.log(
  `verdict: memory ${flat ? 'flat' : 'NOT flat'} (target under ${FLAT_MB_PER_10_MIN} MB per 10 min), backlog ${backlogBounded ? 'bounded' : 'NOT bounded'}, ${errors} errors (target 0)${exited ? ', the server EXITED during the run' : ''}: ${flat && backlogBounded && errors === 0 && !exited ? 'PASS' : 'FAIL'}`,
);
if (errors > 0 || exited) console.log(`\nthe server's log, its last lines (stacks left out):\n${serverLog.map((line) => line.slice(0, 300)).join('\n')}`);
process.exitCode = flat && backlogBounded && errors === 0 && !exited ? 0 : 1;
