#!/usr/bin/env node
// Heap and time of one ClickHouse load of a large journal segment: ~110,000 events (~64 MB,
// the size the journal seals segments at) like the reporting bench's Live batches (event
// type, user, insert_id), every other one with event and user properties, 1% `$identify`,
// a quarter of the users anonymous on their devices first. Each run loads the segment into
// a fresh database of a private ClickHouse (entities in an in-memory DuckDB session, as
// load.mjs's `engine` setup) after a full GC, sampling process.memoryUsage() every 50 ms.
// Prints each run's peak heap (heapUsed) above the heap before the load, the peak of
// ArrayBuffers outside the heap (the file's bytes, encoded rows), the load's time and the CPU
// time of the loader (this process) and of ClickHouse during it, then their medians. Needs a build of the server (`cd packages/server && npx tsc -p
// tsconfig.build.json`); `--dist` points at another build, `--chunk-lines` sets the
// engine's load chunk (builds without one ignore it); `--zones N` records the first N of
// ZONES as built before the load, so that it writes their local days (local-days.ts).
//
//   node --expose-gc scripts/bench/engines/segment-memory.mjs [--events 110000] [--runs 3] [--chunk-lines N] [--zones N] [--dist packages/server/dist]
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startClickHouse } from '../../clickhouse/start.mjs';
import { memorySession } from '../support/memory-session.mjs';

const { values: options } = parseArgs({
  options: {
    events: { type: 'string', default: '110000' },
    runs: { type: 'string', default: '3' },
    'chunk-lines': { type: 'string' },
    zones: { type: 'string', default: '0' },
    dist: { type: 'string', default: join(import.meta.dirname, '../../../packages/server/dist') },
  },
});
if (!globalThis.gc) throw new Error('Run with --expose-gc');
const dist = pathToFileURL(resolve(options.dist)).href;
const { ClickHouseEngine } = await import(`${dist}/store/clickhouse/engine.js`);
const { EVENT_COLUMNS, journalLine } = await import(`${dist}/store/journal-line.js`);

const TOTAL = Number(options.events);
const APP = 1;
const START = Date.UTC(2026, 9, 1);
const EMPTY = Object.fromEntries(Object.keys(EVENT_COLUMNS).map((name) => [name, null]));
const USERS = 20_000;
const ZONES = ['UTC', 'America/New_York', 'Asia/Kolkata'];

function event(index) {
  const user = (index * 104729) % USERS;
  const identify = index % 100 === 0;
  const withProperties = index % 2 === 1;
  return {
    ...EMPTY,
    app_id: APP,
    insert_id: `live-${START}-${Math.floor(index / 500)}-${index % 500}`,
    event_type: identify ? '$identify' : withProperties ? `Event ${index % 20}` : 'Live',
    user_id: user % 4 === 0 && index < TOTAL / 2 ? null : `live-${user}`,
    device_id: `device-${user}`,
    time: START + index * 10,
    server_upload_time: START + index * 10,
    session_id: START + user,
    event_properties: withProperties
      ? { path: `/page/${index % 50}`, referrer: `https://example.com/${index % 977}/landing?utm_source=newsletter&utm_campaign=spring-${index % 13}`, amount: (index % 97) * 1.25, items: Array.from({ length: 6 }, (_, i) => ({ sku: `sku-${(index + i) % 1000}`, qty: i + 1, price: 9.99 + i })), nested: { depth: index % 3, label: `label-${index % 31}` } }
      : null,
    user_properties: identify ? { $set: { plan: user % 5 === 0 ? 'pro' : 'free' }, $add: { visits: 1 } } : withProperties ? { cohort: `c-${user % 40}`, locale: 'de-DE', city: 'Berlin', signup: START - user * 1000 } : null,
    skip_user_properties_sync: false,
    platform: 'iOS',
    os_name: 'ios',
    os_version: '17.4.1',
    device_model: 'iPhone15,2',
    country: 'Germany',
    language: 'German',
    ip_address: `10.0.${user % 256}.${index % 256}`,
    library: 'svc-swift/1.4.0',
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const mb = (bytes) => Math.round(bytes / 1e5) / 10;

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-segment-memory-'));
const path = join(dir, 'segment-1.jsonl');
writeFileSync(path, `${Array.from({ length: TOTAL }, (_, i) => journalLine(event(i))).join('\n')}\n`);
console.log(`segment: ${TOTAL} events, ${mb(statSync(path).size)} MB`);
const clickhouse = await startClickHouse();
const results = { heap: [], external: [], seconds: [], loaderCpu: [], clickhouseCpu: [] };
/** User + system CPU seconds a process has used (Linux /proc/<pid>/stat, clock ticks of 1/100 s). */
const cpuSecondsOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
try {
  for (let run = 0; run < Number(options.runs); run++) {
    const session = await memorySession();
    const engine = await ClickHouseEngine.open({ url: clickhouse.url, database: `segment_memory_${run}`, loadChunkLines: options['chunk-lines'] && Number(options['chunk-lines']) }, session);
    for (const zone of ZONES.slice(0, Number(options.zones))) {
      const answer = await fetch(`${clickhouse.url}/?database=segment_memory_${run}`, { method: 'POST', body: `INSERT INTO local_day_zones VALUES (${APP}, '${zone}')` });
      if (!answer.ok) throw new Error(await answer.text());
    }
    globalThis.gc();
    const before = process.memoryUsage();
    let peakHeap = before.heapUsed;
    let peakExternal = before.arrayBuffers;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peakHeap = Math.max(peakHeap, now.heapUsed);
      peakExternal = Math.max(peakExternal, now.arrayBuffers);
    }, 50);
    const [cpuBefore, clickhouseBefore] = [process.cpuUsage(), cpuSecondsOf(clickhouse.pid)];
    const started = performance.now();
    await engine.loadSegment(path, 'segment-1');
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const [loaderCpu, clickhouseCpu] = [(cpu.user + cpu.system) / 1e6, cpuSecondsOf(clickhouse.pid) - clickhouseBefore];
    clearInterval(sampler);
    const [{ n }] = await engine.query('SELECT count() AS n FROM events');
    if (Number(n) !== TOTAL) throw new Error(`${n} events loaded, ${TOTAL} expected`);
    await engine.close();
    session.close();
    results.heap.push(mb(peakHeap - before.heapUsed));
    results.external.push(mb(peakExternal));
    results.seconds.push(Math.round(seconds * 100) / 100);
    results.loaderCpu.push(Math.round(loaderCpu * 100) / 100);
    results.clickhouseCpu.push(Math.round(clickhouseCpu * 100) / 100);
    console.log(
      `run ${run + 1}: peak heap +${mb(peakHeap - before.heapUsed)} MB (from ${mb(before.heapUsed)} MB), peak ArrayBuffers ${mb(peakExternal)} MB, load ${seconds.toFixed(2)} s (${Math.round(TOTAL / seconds)} events/s); CPU: loader ${loaderCpu.toFixed(2)} s, ClickHouse ${clickhouseCpu.toFixed(2)} s`,
    );
  }
} finally {
  await clickhouse.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  `median: peak heap +${median(results.heap)} MB, peak ArrayBuffers ${median(results.external)} MB, load ${median(results.seconds)} s; CPU: loader ${median(results.loaderCpu)} s, ClickHouse ${median(results.clickhouseCpu)} s`,
);
