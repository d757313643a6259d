// What the soak measures of the server: resident memory (Linux's VmRSS) of its process, of
// its child processes (the engine runs in one) and of ClickHouse's server, the JS heap and
// ArrayBuffers of the server and of its engine (from the probes' files), and the journal backlog
// in its data directory, and ClickHouse's memory by holder (caches, queries and merges, primary keys).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { childrenOf } from '../support/process-memory.mjs';

/** `<stamp>-<sequence>.ndjson`, halves of a split segment `.0` / `.1` (packages/server/src/store/journal.ts); a loaded segment is deleted. */
const SEGMENT = /^\d{15}-\d{6}(?:\.[01])*\.ndjson$/;

/** VmRSS of a process in bytes; undefined once it is gone. */
function rss(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Every descendant of a process. */
const descendants = (pid) => childrenOf(pid).flatMap((child) => [child, ...descendants(child)]);

/** What a process's probe last wrote (heap, ArrayBuffers); empty when it has not or while it writes. */
function probed(heapFile, pid) {
  try {
    const file = `${heapFile}.${pid}`;
    return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  } catch {
    return {};
  }
}

const sum = (values) => (values.some((v) => v === undefined) || values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0));

export function memoryOf(serverPid, clickhousePid, heapFile) {
  const enginePids = descendants(serverPid).filter((pid) => rss(pid) !== undefined);
  const server = probed(heapFile, serverPid);
  const engines = enginePids.map((pid) => probed(heapFile, pid));
  return {
    serverRss: rss(serverPid) ?? 0,
    engineRss: sum(enginePids.map(rss)),
    clickhouseRss: clickhousePid === undefined ? undefined : rss(clickhousePid),
    heapUsed: server.heapUsed,
    arrayBuffers: server.arrayBuffers,
    engineArrayBuffers: sum(engines.map((e) => e.arrayBuffers)),
    engineHeapUsed: sum(engines.map((e) => e.heapUsed)),
  };
}

/** The journal's segments on disk (the open one among them): count and bytes. */
export function journalBacklog(dataDir) {
  const dir = join(dataDir, 'journal');
  const names = existsSync(dir) ? readdirSync(dir).filter((name) => SEGMENT.test(name)) : [];
  let bytes = 0;
  for (const name of names) {
    try {
      bytes += statSync(join(dir, name)).size;
    } catch {
      // Loaded and deleted since the listing.
    }
  }
  return { segments: names.length, bytes };
}

/**
 * ClickHouse's memory by holder: its mark and uncompressed caches (bounded by its configuration:
 * held by design), what its queries and merges hold now (MemoryTracking), the primary keys of
 * its active parts (grow with the stored rows), and its active and outdated parts (merged away,
 * kept until removed, with their metadata in memory). Caches are undefined until its asynchronous metrics are first computed
 * (after a minute); every field is undefined when ClickHouse does not answer.
 */
export async function clickhouseMemory(url) {
  const query = `SELECT
    (SELECT sumIf(value, metric IN ('MarkCacheBytes', 'UncompressedCacheBytes')) FROM system.asynchronous_metrics) AS caches,
    (SELECT countIf(metric = 'MarkCacheBytes') FROM system.asynchronous_metrics) AS computed,
    (SELECT sumIf(value, metric = 'MemoryTracking') FROM system.metrics) AS tracked,
    (SELECT sum(primary_key_bytes_in_memory_allocated) FROM system.parts WHERE active) AS primaryKeys,
    (SELECT count() FROM system.parts WHERE active) AS parts,
    (SELECT count() FROM system.parts WHERE NOT active) AS outdatedParts
  FORMAT JSONEachRow`;
  try {
    const response = await fetch(`${url}/?query=${encodeURIComponent(query)}`);
    if (!response.ok) return {};
    const row = JSON.parse(await response.text());
    const number = (name) => Number(row[name]);
    return {
      caches: number('computed') > 0 ? number('caches') : undefined,
      tracked: number('tracked'),
      primaryKeys: number('primaryKeys'),
      parts: number('parts'),
      outdatedParts: number('outdatedParts'),
    };
  } catch {
    return {};
  }
}
