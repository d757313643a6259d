// Sustained end-to-end ingestion: the server (its own process, as `svc-server start` runs)
// receives batches of 2000 events as fast as it acknowledges them (--concurrency in flight,
// or at --events-per-second) for --minutes, while every --row-seconds a row prints what was
// acknowledged and what reporting can already see (segmentation's total of every event over
// the days of the run), the backlog between the two, the journal on disk and the CPU time
// the server's processes (the server and its engine process; not ClickHouse) spent per
// acknowledged event. After the sending stops it waits for the backlog to drain and prints
// the rates: acknowledged, and acknowledged → queryable (events over the time until the
// last was queryable). The insert_id window is 72 s (--insert-id-window-hours 0.02): at these
// rates a 7-day window would not fit in memory (docs/server.md).
//   node scripts/bench/sustained/run.mjs [--engine duckdb|clickhouse] [--minutes 10] [--concurrency 8] [--events-per-second N] [--row-seconds 30]
import { parseArgs } from 'node:util';
import { makeBodies } from '../ingest/events.mjs';
import { journalBacklog } from '../soak/measure.mjs';
import { treeCpuMillis } from '../support/process-cpu.mjs';
import { startServerProcess } from '../support/server-process.mjs';
import { dayOf } from '../soak/traffic.mjs';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'duckdb' },
    minutes: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '8' },
    'events-per-second': { type: 'string' },
    'row-seconds': { type: 'string', default: '30' },
  },
});
const BATCH = 2000;
const ROW_MS = Number(values['row-seconds']) * 1000;
const RUN_MS = Number(values.minutes) * 60_000;
const DRAIN_LIMIT_MS = 30 * 60_000;

const server = await startServerProcess({ engine: values.engine, serverArgs: ['--insert-id-window-hours', '0.02'] });
const authorization = `Basic ${Buffer.from(`${server.apiKey}:${server.secretKey}`).toString('base64')}`;
const startedAt = Date.now();
// One body as a template; each upload replaces its run token, so every insert_id is new.
const template = makeBodies(server.apiKey, 'RUNTOKEN', 1, BATCH)[0];
const days = [...new Set([dayOf(startedAt - 1_000_000), dayOf(startedAt + RUN_MS + DRAIN_LIMIT_MS)])];

/** Events reporting sees over the run's days. */
async function queryable() {
  const e = encodeURIComponent(JSON.stringify({ event_type: '_all' }));
  const response = await fetch(`${server.url}/api/2/events/segmentation?e=${e}&m=totals&start=${days[0]}&end=${days.at(-1)}`, { headers: { authorization } });
  if (response.status !== 200) throw new Error(`segmentation answered ${response.status}: ${await response.text()}`);
  return (await response.json()).data.series[0].reduce((sum, n) => sum + n, 0);
}

let acknowledged = 0;
let sent = 0;
let failures = 0;
let sending = true;
const cpuAtStart = treeCpuMillis(server.child.pid);
const started = performance.now();
const interval = values['events-per-second'] === undefined ? 0 : (BATCH * 1000) / Number(values['events-per-second']);
async function sender() {
  while (sending) {
    const n = sent++;
    const due = started + n * interval;
    if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
    if (!sending) return;
    const response = await fetch(`${server.url}/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: template.replaceAll('RUNTOKEN', `s${n}`) });
    await response.arrayBuffer();
    if (response.status === 200) acknowledged += BATCH;
    else failures++;
  }
}
const senders = Array.from({ length: Number(values.concurrency) }, sender);
console.log(`sustained: ${server.engine}, ${values.minutes} min, ${values.concurrency} uploads in flight${interval ? ` at ${values['events-per-second']} events/s` : ', as fast as acknowledged'}, batches of ${BATCH}`);
console.log('elapsed | acknowledged | acknowledged/s (window) | queryable | queryable/s (window) | backlog events | journal segments / MB | server CPU µs per event');
let last = { at: 0, acknowledged: 0, queryable: 0 };
const row = async () => {
  const at = performance.now() - started;
  const [seen, backlog] = [await queryable(), journalBacklog(server.dataDir)];
  const seconds = (at - last.at) / 1000;
  const cpuPerEvent = acknowledged === 0 ? 0 : ((treeCpuMillis(server.child.pid) - cpuAtStart) * 1000) / acknowledged;
  console.log(
    `${(at / 1000).toFixed(0).padStart(5)} s | ${acknowledged} | ${((acknowledged - last.acknowledged) / seconds).toFixed(0)} | ${seen} | ${((seen - last.queryable) / seconds).toFixed(0)} | ${acknowledged - seen} | ${backlog.segments} / ${(backlog.bytes / 2 ** 20).toFixed(0)} | ${cpuPerEvent.toFixed(1)}`,
  );
  last = { at, acknowledged, queryable: seen };
  return seen;
};
while (performance.now() - started < RUN_MS) {
  await new Promise((resolve) => setTimeout(resolve, Math.min(ROW_MS, RUN_MS - (performance.now() - started))));
  await row();
}
sending = false;
await Promise.all(senders);
const sendSeconds = (performance.now() - started) / 1000;
console.log(`sending stopped: ${acknowledged} events acknowledged in ${sendSeconds.toFixed(0)} s, ${failures} uploads failed; waiting for the backlog`);
let seen = await row();
while (seen < acknowledged && performance.now() - started < RUN_MS + DRAIN_LIMIT_MS) {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  seen = await queryable();
}
const endSeconds = (performance.now() - started) / 1000;
await row();
const cpuPerEvent = ((treeCpuMillis(server.child.pid) - cpuAtStart) * 1000) / acknowledged;
await server.stop();
console.log(
  `\nacknowledged: ${(acknowledged / sendSeconds).toFixed(0)} events/s; acknowledged → queryable: ${(seen / endSeconds).toFixed(0)} events/s (${seen} of ${acknowledged} queryable ${endSeconds.toFixed(0)} s after the start, ${(endSeconds - sendSeconds).toFixed(0)} s after the sending stopped); server CPU ${cpuPerEvent.toFixed(1)} µs per event (request path and loading, the server and its engine process)`,
);
if (seen < acknowledged || failures > 0) process.exitCode = 1;
