#!/usr/bin/env node
// Load throughput of journal segments on both engines: the same stored events
// (../support/stored-events.mjs) written as segments of `--segment` events, loaded one after another by DuckDbEngine and by
// ClickHouseEngine (Debian's 18.16 on loopback, entities in an in-memory DuckDB session).
// Prints events/s per engine and run, with the longest event-loop delay during the loads
// (what a request arriving meanwhile waits), then the medians. Setups: `engine` loads with
// the bare engine; `main` and `process` load through a server (`startServer`, the journal's
// loads: records appended, then `flush`), its engine on the server's thread or in its own
// process (entities on PostgreSQL for ClickHouse). `--shards N` adds ClickHouse split across N
// shards of one server each on the same machine (`clickhouse N shards`), side by side with one.
// Needs the server's dist (`cd packages/server && npx tsc -p tsconfig.build.json`).
//
//   node --expose-gc scripts/bench/engines/load.mjs [--events 1000000] [--segment 50000] [--runs 1] [--setups engine,main,process] [--shards 2]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startServer } from '../../../packages/server/dist/server.js';
import { ClickHouseEngine } from '../../../packages/server/dist/store/clickhouse/engine.js';
import { DuckDbEngine } from '../../../packages/server/dist/store/duckdb/engine.js';
import { startCluster } from '../../clickhouse/cluster.mjs';
import { startClickHouse } from '../../clickhouse/start.mjs';
import { startPostgres } from '../../postgres/start.mjs';
import { memorySession } from '../support/memory-session.mjs';
import { storedEvent, writeSegments } from '../support/stored-events.mjs';

const { values: options } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    segment: { type: 'string', default: '50000' },
    runs: { type: 'string', default: '1' },
    setups: { type: 'string', default: 'engine,main,process' },
    shards: { type: 'string', default: '1' },
  },
});
const TOTAL = Number(options.events);
const SEGMENT = Number(options.segment);

/** Loads every segment; events per second of the loads alone (segment files written before). */
async function measure(engine, dir) {
  const paths = writeSegments(dir, TOTAL, SEGMENT);
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const started = performance.now();
  for (const [n, path] of paths.entries()) await engine.loadSegment(path, `segment-${n}`);
  const seconds = (performance.now() - started) / 1000;
  delay.disable();
  return { eventsPerSecond: Math.round(TOTAL / seconds), maxDelayMs: Math.round(delay.max / 1e6) };
}

/** Loads through a server: a segment's records appended, then loaded by `flush`; the delay measured during the flushes. */
async function measureServer(server) {
  let loading = 0;
  let maxDelay = 0;
  for (let from = 0; from < TOTAL; from += SEGMENT) {
    const records = [];
    for (let i = from; i < Math.min(TOTAL, from + SEGMENT); i++) records.push(storedEvent(i, TOTAL));
    await server.store.append(records);
    // The records' garbage is the bench's own (run with --expose-gc to collect it first).
    globalThis.gc?.();
    // A histogram per flush: one enabled again counts the time it was disabled as a delay.
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = performance.now();
    await server.store.flush();
    loading += performance.now() - started;
    delay.disable();
    maxDelay = Math.max(maxDelay, delay.max);
  }
  return { eventsPerSecond: Math.round(TOTAL / (loading / 1000)), maxDelayMs: Math.round(maxDelay / 1e6) };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const setups = options.setups.split(',');
const results = new Map();
const record = (key, value) => results.set(key, [...(results.get(key) ?? []), value]);
const clickhouse = await startClickHouse();
const SHARDS = Number(options.shards);
const cluster = SHARDS > 1 ? await startCluster({ shards: SHARDS }) : undefined;
const SHARDED = `clickhouse ${SHARDS} shards`;
/** The engine's options for ClickHouse: one server, or the cluster's shards. */
const clickhouseOptions = (name) => {
  if (name !== SHARDED) return { url: clickhouse.url };
  const [[url], ...others] = cluster.shardUrls();
  return { url, shardUrls: others, cluster: cluster.cluster };
};
const postgres = setups.some((setup) => setup !== 'engine') ? await startPostgres() : undefined;
try {
  for (let run = 0; run < Number(options.runs); run++) {
    for (const name of ['duckdb', 'clickhouse', ...(cluster ? [SHARDED] : [])]) {
      for (const setup of setups) {
        const dir = mkdtempSync(join(tmpdir(), 'svc-bench-engines-'));
        const database = `bench_${run}_${setup}`;
        let measured;
        if (setup === 'engine') {
          const session = await memorySession();
          const engine = name === 'duckdb' ? await DuckDbEngine.open(dir) : await ClickHouseEngine.open({ ...clickhouseOptions(name), database }, session);
          measured = await measure(engine, dir);
          const [{ n }] = await engine.query('SELECT count(*) AS n FROM events');
          if (Number(n) !== TOTAL) throw new Error(`${name}: ${n} events loaded, ${TOTAL} expected`);
          await engine.close();
          session.close();
        } else {
          const { url, shardUrls, cluster: clickhouseCluster } = clickhouseOptions(name);
          const engineConfig = name === 'duckdb' ? { engine: 'duckdb' } : { engine: 'clickhouse', clickhouseUrl: url, clickhouseShardUrls: shardUrls, clickhouseCluster, clickhouseDatabase: database, postgresUrl: postgres.url };
          const server = await startServer({ dataDir: dir, host: '127.0.0.1', port: 0, loadIntervalMs: 3_600_000, engineIn: setup, log: () => undefined, ...engineConfig });
          measured = await measureServer(server);
          const [{ n }] = await server.store.query('SELECT count(*) AS n FROM events');
          if (Number(n) !== TOTAL) throw new Error(`${name} ${setup}: ${n} events loaded, ${TOTAL} expected`);
          await server.close();
        }
        rmSync(dir, { recursive: true, force: true });
        record(`${name} ${setup} events/s`, measured.eventsPerSecond);
        record(`${name} ${setup} delay`, measured.maxDelayMs);
        console.log(`run ${run + 1} ${name} ${setup}: ${measured.eventsPerSecond} events/s, longest event-loop delay ${measured.maxDelayMs} ms (${TOTAL} events, segments of ${SEGMENT})`);
      }
    }
  }
} finally {
  await clickhouse.stop();
  await cluster?.stop();
  await postgres?.stop();
}
for (const [key, values] of results) console.log(`median ${key}: ${median(values)} (${values.join(', ')})`);
