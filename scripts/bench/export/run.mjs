// Export API benchmark: a seeded day of events (default 1,000,000, spread over its 24 hours of
// server upload time) loaded through the journal loader into a fresh data directory, then the
// server (`svc-server start` on that directory, in a process of its own, DuckDB) answers
// `GET /api/2/export` of the whole day several times. Printed: the archive's size, the events
// streamed per second (median of the runs, and each run), and the server's memory: its peak
// resident set (VmHWM) before the first export and after the last, and the highest resident set
// sampled every 20 ms during the exports, for the server process and for its engine process.
// A first, untimed run checks the archive: 24 entries, every event in them once.
//   node scripts/bench/export/run.mjs [--events 1000000] [--runs 5] [--users 100000] [--engine-nice idle|N]
// --engine-nice sets the server's engine process priority below its own (the server's default,
// idle, gives the engine only CPU time nothing else wants: on a machine shared with other work
// the export then waits for it; 0 runs it as the server).
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { parseArgs } from 'node:util';
import yauzl from 'yauzl';
import { Tenancy } from '../../../packages/server/dist/index.js';
import { childrenOf, memory } from '../support/process-memory.mjs';
import { loadSeededDay } from '../support/seeded-load.mjs';
import { startServerOn } from '../support/server-flags.mjs';

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '5' }, users: { type: 'string', default: '100000' }, 'engine-nice': { type: 'string', default: 'idle' } } });
const EVENTS = Number(values.events);
const RUNS = Number(values.runs);
const USERS = Number(values.users);
const DAY = Date.UTC(2026, 10, 20);

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-export-'));
const tenancy = new Tenancy(dataDir);
const project = tenancy.createProject(tenancy.createOrganization('Bench').id, 'Bench');

const load = () => loadSeededDay(dataDir, project.app_id, EVENTS, USERS, DAY);

/** CPU time a process has used, seconds (user and system, its threads included). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const auth = { authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}` };
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** One export of the day: seconds and bytes; the archive is written to `file` when given. */
async function exportDay(url, file) {
  const started = performance.now();
  const response = await fetch(`${url}/api/2/export?start=20261120T00&end=20261120T23`, { headers: auth });
  if (response.status !== 200) throw new Error(`export answered ${response.status}: ${await response.text()}`);
  let bytes = 0;
  if (file) {
    await pipeline(Readable.fromWeb(response.body), createWriteStream(file));
  } else {
    for await (const chunk of response.body) bytes += chunk.length;
  }
  return { seconds: (performance.now() - started) / 1000, bytes };
}

/** The entries of an archive file and the lines of each (counted as they are gunzipped). */
function countLines(file) {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (failed, zip) => {
      if (failed) return reject(failed);
      const counts = [];
      zip.on('end', () => resolve(counts)).on('error', reject);
      zip.on('entry', (entry) => {
        zip.openReadStream(entry, (opened, stream) => {
          if (opened) return reject(opened);
          let lines = 0;
          stream
            .pipe(createGunzip())
            .on('data', (chunk) => {
              for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
            })
            .on('end', () => {
              counts.push({ name: entry.fileName, lines });
              zip.readEntry();
            })
            .on('error', reject);
        });
      });
      zip.readEntry();
    });
  });
}

const loadSeconds = await load();
console.log(`dataset: ${EVENTS.toLocaleString()} events over 24 hours of server upload time, loaded in ${loadSeconds.toFixed(0)} s; engine priority: ${values['engine-nice']}`);
const { child, url } = await startServerOn(dataDir, values['engine-nice']);
try {
  const [enginePid] = childrenOf(child.pid);
  const before = { server: memory(child.pid), engine: memory(enginePid) };
  const file = join(dataDir, 'check.zip');
  const check = await exportDay(url, file);
  const counts = await countLines(file);
  const total = counts.reduce((sum, c) => sum + c.lines, 0);
  if (counts.length !== 24 || total !== EVENTS) throw new Error(`the archive holds ${counts.length} entries and ${total} lines, not 24 and ${EVENTS}`);
  console.log(`check: ${counts.length} entries (${counts[0].name} ... ${counts.at(-1).name}), ${total.toLocaleString()} lines; untimed run ${check.seconds.toFixed(1)} s`);
  rmSync(file);

  const peak = { server: 0, engine: 0 };
  const sampler = setInterval(() => {
    peak.server = Math.max(peak.server, memory(child.pid)?.rss ?? 0);
    peak.engine = Math.max(peak.engine, memory(enginePid)?.rss ?? 0);
  }, 20);
  const runs = [];
  const cpuBefore = { server: cpuSeconds(child.pid), engine: cpuSeconds(enginePid), bench: process.cpuUsage() };
  for (let run = 0; run < RUNS; run++) runs.push(await exportDay(url));
  const perEvent = (seconds) => ((seconds * 1e6) / (EVENTS * RUNS)).toFixed(1);
  const benchCpu = process.cpuUsage(cpuBefore.bench);
  clearInterval(sampler);
  const after = { server: memory(child.pid), engine: memory(enginePid) };
  const rates = runs.map((r) => EVENTS / r.seconds);
  console.log(`archive: ${(runs[0].bytes / 2 ** 20).toFixed(1)} MB (${(runs[0].bytes / EVENTS).toFixed(0)} bytes/event)`);
  console.log(`export throughput: median ${Math.round(median(rates)).toLocaleString()} events/s over ${RUNS} runs (${rates.map((r) => Math.round(r / 1000)).join(', ')} thousand/s; median ${median(runs.map((r) => r.seconds)).toFixed(2)} s per export)`);
  console.log(`CPU per exported event: server ${perEvent(cpuSeconds(child.pid) - cpuBefore.server)} µs (its gzip threads included), engine ${perEvent(cpuSeconds(enginePid) - cpuBefore.engine)} µs, this client ${perEvent((benchCpu.user + benchCpu.system) / 1e6)} µs; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${availableParallelism()} CPUs`);
  console.log(`server process: peak RSS ${peak.server.toFixed(0)} MB during the exports (VmHWM ${before.server.hwm.toFixed(0)} MB before the first export, ${after.server.hwm.toFixed(0)} MB after the last; RSS ${before.server.rss.toFixed(0)} MB before)`);
  console.log(`engine process: peak RSS ${peak.engine.toFixed(0)} MB during the exports (VmHWM ${before.engine.hwm.toFixed(0)} MB before, ${after.engine.hwm.toFixed(0)} MB after)`);
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
