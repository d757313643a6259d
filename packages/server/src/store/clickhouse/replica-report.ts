// `svc-server admin replicas`: the replicas of the shard the server uses, each with whether it
// answers and whether it holds what the others wrote: the server does not use a replica that
// does not answer, nor one behind (its tables with parts to fetch or shared-log entries not
// read), and answers 503 when none is left. Read with plain clients: nothing is changed.
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { TABLE_BEHIND } from './replicas.js';
import { literal } from './sql-text.js';

interface TableState {
  table: string;
  behind: number;
  is_readonly: number;
  inserts_in_queue: number;
  queue_size: number;
  log_pointer: number;
  log_max_index: number;
  absolute_delay: number;
  active_replicas: number;
  total_replicas: number;
}

/** Prints a line per replica (and per table behind); how many replicas the server cannot use now. */
export async function reportReplicas(urls: readonly string[], database = 'default', print: (line: string) => void = console.log): Promise<number> {
  let unusable = 0;
  for (const url of urls) {
    const client = createClient({ url, database, log: { level: ClickHouseLogLevel.OFF }, clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
    try {
      const ping = await client.ping();
      if (!ping.success) {
        unusable++;
        print(`${url}: does not answer (${ping.error.message})`);
        continue;
      }
      const tables = await (
        await client.query({
          query: `SELECT table, ${TABLE_BEHIND} AS behind, is_readonly, inserts_in_queue, queue_size, log_pointer, log_max_index, absolute_delay, active_replicas, total_replicas
                  FROM system.replicas WHERE database = ${literal(database)} ORDER BY table`,
          format: 'JSONEachRow',
        })
      ).json<TableState>();
      if (tables.length === 0) {
        print(`${url}: answers; no replicated tables in ${database}`);
        continue;
      }
      const behind = tables.filter((t) => t.behind === 1);
      const readonly = tables.filter((t) => t.is_readonly === 1).length;
      const delay = Math.max(...tables.map((t) => t.absolute_delay));
      const active = Math.min(...tables.map((t) => t.active_replicas));
      print(`${url}: answers; ${tables.length} replicated tables, ${behind.length} behind, ${readonly} read-only (ZooKeeper lost), largest delay ${delay} s, ${active} of ${tables[0]!.total_replicas} replicas active`);
      for (const t of behind) print(`  ${t.table}: ${t.inserts_in_queue} parts to fetch, ${t.queue_size} queued, shared log read to ${t.log_pointer} of ${t.log_max_index + 1}`);
      if (behind.length > 0) unusable++;
    } finally {
      await client.close();
    }
  }
  print(
    unusable === 0
      ? 'every replica can be used'
      : `${unusable} of ${urls.length} replicas cannot be used now: one down is used again once it answers and has fetched what the others wrote meanwhile; one behind catches up by itself while the replicas that hold what it lacks answer (docs/engines.md)`,
  );
  return unusable;
}
