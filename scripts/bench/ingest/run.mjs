// Ingest benchmark: starts the server (its own process, fresh data directory), then runs
// the client process several times (each: BATCHES bodies of 2000 events, CONCURRENCY in
// flight, fresh insert_ids) and prints events/s and per-batch p50/p99 for the acknowledged
// (durable, deduplicated) uploads and for JSON.parse alone, with the median of the runs.
// Then it waits until the journal is loaded into the engine and prints the CPU time per event
// over the whole session of the server's process (the request path) and of its engine process
// (loading), and their sum (Linux /proc), figures
// less sensitive than throughput to what else the machine is doing.
//   node scripts/bench/ingest/run.mjs [--runs 5] [--batches 100] [--concurrency 8] [--cpu-prof DIR]
// --cpu-prof writes a V8 CPU profile of the server process into DIR (open it in Chrome
// DevTools or summarise it with scripts/bench/ingest/profile-summary.mjs).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Tenancy } from '../../../packages/server/dist/shared/tenancy.js';
import { cpuMillis, treeCpuMillis } from '../support/process-cpu.mjs';
import { serverBin, serverFlags } from '../support/server-flags.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, batches: { type: 'string', default: '100' }, concurrency: { type: 'string', default: '8' }, 'cpu-prof': { type: 'string' } } });

const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** Resolves once every journal segment is loaded: only the open segment is left, empty. */
async function journalLoaded(dir) {
  for (;;) {
    const segments = readdirSync(dir).filter((name) => name.endsWith('.ndjson'));
    if (segments.length === 1 && statSync(join(dir, segments[0])).size === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function waitForPort(port) {
  for (let i = 0; i < 300; i++) {
    const open = await new Promise((ok) => net.connect({ port, host: '127.0.0.1' }, function () { this.destroy(); ok(true); }).on('error', () => ok(false)));
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server did not start');
}

// Other work on the machine competes for the same cores: its load is printed with the figures.
const loadBefore = loadavg()[0];
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
const tenancy = new Tenancy(dataDir);
const project = tenancy.createProject(tenancy.createOrganization('Bench').id, 'Bench');
const port = await freePort();
const profiling = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] : [];
const server = spawn(process.execPath, [...serverFlags(), ...profiling, serverBin, 'start', '--data-dir', dataDir, '--port', String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
try {
  await waitForPort(port);
  const linux = process.platform === 'linux';
  // The server's own process, and the engine process (and anything else) below it.
  const cpuNow = () => (linux ? { server: cpuMillis(server.pid), engine: treeCpuMillis(server.pid) - cpuMillis(server.pid) } : { server: 0, engine: 0 });
  const startupCpu = cpuNow();
  const results = [];
  for (let run = 0; run < Number(values.runs); run++) {
    const out = execFileSync(process.execPath, [join(here, 'client.mjs'), `http://127.0.0.1:${port}`, project.api_key, `r${run}`, values.batches, values.concurrency], { encoding: 'utf8', maxBuffer: 1 << 20 });
    const result = JSON.parse(out.trim().split('\n').pop());
    results.push(result);
    console.log(`run ${run + 1}: upload ${result.upload.eventsPerSecond} events/s (p50 ${result.upload.p50.toFixed(1)} ms, p99 ${result.upload.p99.toFixed(1)} ms); JSON.parse ${result.parse.eventsPerSecond} events/s (p50 ${result.parse.p50.toFixed(1)} ms, p99 ${result.parse.p99.toFixed(1)} ms)`);
  }
  await journalLoaded(join(dataDir, 'journal'));
  const events = results.length * Number(values.batches) * 2000;
  const endCpu = cpuNow();
  const perEvent = (ms) => `${((ms * 1000) / events).toFixed(1)} µs`;
  const [serverMs, engineMs] = [endCpu.server - startupCpu.server, endCpu.engine - startupCpu.engine];
  const serverCpu = linux ? `${perEvent(serverMs + engineMs)} (server process, the request path: ${perEvent(serverMs)}; engine process, loading: ${perEvent(engineMs)})` : 'not measured (needs /proc)';
  const median = (pick) => {
    const sorted = results.map(pick).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };
  console.log(`\nmedian of ${results.length} runs, ${values.batches} batches of 2000 events each, ${values.concurrency} in flight:`);
  console.log(`  acknowledged (durable, dedupe on): ${median((r) => r.upload.eventsPerSecond)} events/s, per batch p50 ${median((r) => r.upload.p50).toFixed(1)} ms, p99 ${median((r) => r.upload.p99).toFixed(1)} ms`);
  console.log(`  server CPU per event, end to end: ${serverCpu}`);
  console.log(`  load average (1 min) before the benchmark: ${loadBefore.toFixed(2)} on ${availableParallelism()} cores`);
  console.log(`  JSON.parse alone:                  ${median((r) => r.parse.eventsPerSecond)} events/s, per batch p50 ${median((r) => r.parse.p50).toFixed(1)} ms, p99 ${median((r) => r.parse.p99).toFixed(1)} ms`);
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
