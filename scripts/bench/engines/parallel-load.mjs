#!/usr/bin/env node
// Loading that grows with processes (ClickHouse): loader processes, each pinned to a core of
// its own (`taskset`), load journal segments of their own project into one ClickHouse
// database, taking turns per project under the PostgreSQL locks as server processes do. One
// process alone, then `--processes` at once (one project each), on fresh databases, run after
// run side by side; prints events/s (all events over the wall time until the last load
// ended), the CPU per event of each loader and of ClickHouse, and the ratio of many to one.
// ClickHouse is not pinned: on a 2-core machine it shares the cores with the loaders. With
// `--one-project` the processes load events of one project (their own insert_ids, the same
// users), as several servers behind one address do: each load then asks ClickHouse for the
// segment's insert_ids stored by the others. Needs the server's dist
// (`cd packages/server && npx tsc -p tsconfig.build.json`).
//
//   node scripts/bench/engines/parallel-load.mjs [--events 400000] [--segment 50000] [--processes 2] [--runs 3] [--one-project]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ClickHouseEngine } from '../../../packages/server/dist/store/clickhouse/engine.js';
import { postgresLoadLock } from '../../../packages/server/dist/store/load-lock.js';
import { postgresSession } from '../../../packages/server/dist/store/postgres/sql-session.js';
import { startClickHouse } from '../../clickhouse/start.mjs';
import { startPostgres } from '../../postgres/start.mjs';
import { cpuMillis } from '../support/process-cpu.mjs';
import { writeSegments } from '../support/stored-events.mjs';

const { values: options } = parseArgs({
  options: {
    events: { type: 'string', default: '400000' },
    segment: { type: 'string', default: '50000' },
    processes: { type: 'string', default: '2' },
    runs: { type: 'string', default: '3' },
    worker: { type: 'boolean', default: false },
    'one-project': { type: 'boolean', default: false },
    app: { type: 'string' },
    loader: { type: 'string' },
    dir: { type: 'string' },
    clickhouse: { type: 'string' },
    postgres: { type: 'string' },
    database: { type: 'string' },
  },
});
const TOTAL = Number(options.events);
const SEGMENT = Number(options.segment);

/** A loader process: its project's segments, loaded as a server's journal loads them; prints its CPU time. */
async function worker() {
  const session = postgresSession(options.postgres, { maxConnections: 3 });
  const engine = await ClickHouseEngine.open({ url: options.clickhouse, database: options.database }, session, { loadLock: postgresLoadLock(session), journalId: `loader-${options.loader}` });
  const paths = writeSegments(options.dir, TOTAL, SEGMENT, Number(options.app), `loader-${options.loader}-`);
  const before = process.cpuUsage();
  process.send('ready');
  await new Promise((resolve) => process.once('message', resolve));
  for (const [n, path] of paths.entries()) await engine.loadSegment(path, `segment-${n}`);
  const cpu = process.cpuUsage(before);
  await engine.close();
  await session.close();
  process.send({ cpuMs: (cpu.user + cpu.system) / 1000 });
}

/** Loader processes on cores 0, 1, …, started together once each has written its segments; wall seconds and CPU per event. */
async function measure(apps, clickhouse, postgres, database) {
  const loaders = apps.map((app, core) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bench-parallel-'));
    const args = [String(core % cpus().length), process.execPath, '--max-semi-space-size=64', fileURLToPath(import.meta.url), '--worker', '--app', String(app), '--loader', String(core), '--dir', dir];
    args.push('--clickhouse', clickhouse.url, '--postgres', postgres.url, '--database', database, '--events', String(TOTAL), '--segment', String(SEGMENT));
    const child = spawn('taskset', ['-c', ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const messages = [];
    const waiting = [];
    child.on('message', (message) => (waiting.length > 0 ? waiting.shift().resolve(message) : messages.push(message)));
    child.on('exit', (code) => {
      for (const waiter of waiting.splice(0)) waiter.reject(new Error(`loader ${app} exited with ${code}`));
    });
    const next = () => (messages.length > 0 ? Promise.resolve(messages.shift()) : new Promise((resolve, reject) => waiting.push({ resolve, reject })));
    return { child, dir, next };
  });
  for (const loader of loaders) await loader.next();
  const clickhouseCpuAtStart = cpuMillis(clickhouse.pid);
  const started = performance.now();
  for (const loader of loaders) loader.child.send('go');
  const done = await Promise.all(loaders.map((loader) => loader.next()));
  const seconds = (performance.now() - started) / 1000;
  const clickhouseMicrosPerEvent = Math.round(((cpuMillis(clickhouse.pid) - clickhouseCpuAtStart) * 1000) / (TOTAL * apps.length));
  for (const loader of loaders) rmSync(loader.dir, { recursive: true, force: true });
  return { seconds, cpuMicrosPerEvent: done.map((d) => Math.round((d.cpuMs * 1000) / TOTAL)), clickhouseMicrosPerEvent };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const processes = Number(options.processes);
  const [clickhouse, postgres] = await Promise.all([startClickHouse(), startPostgres()]);
  const rates = { one: [], many: [] };
  try {
    for (let run = 0; run < Number(options.runs); run++) {
      for (const [setup, apps] of [['one', [1]], ['many', Array.from({ length: processes }, (_, i) => (options['one-project'] ? 1 : i + 1))]]) {
        const database = `parallel_${setup}_${run}`;
        const { seconds, cpuMicrosPerEvent, clickhouseMicrosPerEvent } = await measure(apps, clickhouse, postgres, database);
        const check = postgresSession(postgres.url);
        const engine = await ClickHouseEngine.open({ url: clickhouse.url, database }, check);
        const [{ n }] = await engine.query('SELECT count() AS n FROM events');
        await engine.close();
        await check.close();
        if (Number(n) !== TOTAL * apps.length) throw new Error(`${setup}: ${n} events loaded, ${TOTAL * apps.length} expected`);
        const rate = Math.round((TOTAL * apps.length) / seconds);
        rates[setup].push(rate);
        console.log(`run ${run + 1}, ${apps.length} process(es): ${rate} events/s (${TOTAL * apps.length} events in ${seconds.toFixed(1)} s), CPU per event: loaders ${cpuMicrosPerEvent.join(', ')} µs, ClickHouse ${clickhouseMicrosPerEvent} µs`);
      }
    }
  } finally {
    await Promise.all([clickhouse.stop(), postgres.stop()]);
  }
  const [one, many] = [median(rates.one), median(rates.many)];
  console.log(`median 1 process: ${one} events/s (${rates.one.join(', ')})`);
  console.log(`median ${processes} processes: ${many} events/s (${rates.many.join(', ')})`);
  console.log(`ratio: ${(many / one).toFixed(2)}× (target 1.6×)${options['one-project'] ? ', one project' : ''}`);
}

await (options.worker ? worker() : main());
