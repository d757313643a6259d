// Shards: more than one ClickHouse server's worth of events. The events and what is kept of
// them per user (`user_days`, `user_firsts`, `user_summaries`, `user_local_days`) are split across the shards by `svc_id`, each
// shard's in `<table>_local` (replicated among the shard's replicas), and read whole through a
// Distributed table of the plain name over the operator's cluster (`remote_servers`), which
// lists the shards in the order the server is given them. Every other table lives on the first
// shard only; the engine sends its reads there, and a read of a split table that looks into one
// of them does so with GLOBAL IN / GLOBAL JOIN (computed on the first shard and shipped along).
//
// A user's events are written to the shard of their `svc_id`, so that each shard holds whole
// users. A merge re-points the merged user's rows where they are (a mutation on every shard):
// the answers never depend on a user's rows being on one shard (aggregates are merged across
// shards, and subqueries over split tables are computed whole, `distributed_product_mode =
// 'global'`), only the work each shard can do alone does.
import type { ClickHouseClient } from '@clickhouse/client';
import { literal } from './sql-text.js';
import { LOCAL_NAMES, type ShardedTable } from './tables.js';

const SHARDED: readonly ShardedTable[] = ['events', 'user_days', 'user_firsts', 'user_summaries', 'user_local_days'];
const LOCAL_TABLES = new Map(SHARDED.map((table) => [LOCAL_NAMES(table), table]));

/** Whether the table is one of those split across shards. */
export const isSplit = (table: string): table is ShardedTable => (SHARDED as readonly string[]).includes(table);

/** The shard (its index) of a user's rows: as the Distributed tables' key, `ifNull(svc_id, 0)`, picks among shards of weight 1. */
export const shardOf = (svcId: number | null, shards: number) => (svcId ?? 0) % shards;
const SHARDING_KEY = 'ifNull(svc_id, 0)';

/** The table a migration statement creates, alters or fills. */
function targetOf(statement: string): string | undefined {
  return /^(?:CREATE TABLE IF NOT EXISTS|ALTER TABLE|INSERT INTO|CREATE MATERIALIZED VIEW IF NOT EXISTS \w+ TO) (\w+)/.exec(statement)?.[1];
}

/**
 * A migration's statements (written with LOCAL_NAMES) as one shard runs them: the first shard
 * all of them, the others those of the split tables; each split table gets its Distributed
 * twin, which takes the columns added to it.
 */
export function shardSteps(steps: readonly (readonly string[])[], first: boolean, cluster: string, database: string): string[][] {
  return steps.map((step) =>
    step.flatMap((statement) => {
      const target = targetOf(statement);
      const twin = target === undefined ? undefined : LOCAL_TABLES.get(target);
      if (twin === undefined) return first ? [statement] : [];
      if (statement.startsWith('CREATE TABLE ')) return [statement, `CREATE TABLE IF NOT EXISTS ${twin} AS ${target} ENGINE = Distributed(${cluster}, ${database}, ${target}, ${SHARDING_KEY})`];
      if (statement.startsWith('ALTER TABLE ')) return [statement, statement.replace(`ALTER TABLE ${target} `, `ALTER TABLE ${twin} `)];
      return [statement];
    }),
  );
}

/**
 * Checks that the cluster lists the shards as given: as many, each of weight 1, and each
 * server given as shard i is in the cluster's shard i (else rows would be written to one
 * shard and looked for on another).
 */
export async function checkCluster(shards: readonly (readonly ClickHouseClient[])[], urls: readonly (readonly string[])[], cluster: string): Promise<void> {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(cluster)) throw new Error(`Not a cluster name: ${cluster}`);
  for (const [index, nodes] of shards.entries()) {
    for (const [replica, node] of nodes.entries()) {
      const query = `SELECT (SELECT count(DISTINCT shard_num) FROM system.clusters WHERE cluster = ${literal(cluster)}) AS shards,
        (SELECT countIf(shard_weight != 1) FROM system.clusters WHERE cluster = ${literal(cluster)}) AS weighted,
        (SELECT groupUniqArray(shard_num) FROM system.clusters WHERE cluster = ${literal(cluster)} AND is_local) AS here`;
      const [row] = await (await node.query({ query, format: 'JSONEachRow' })).json<{ shards: number | string; weighted: number | string; here: number[] }>();
      const where = `ClickHouse server ${urls[index]![replica]} (given as shard ${index + 1})`;
      if (Number(row!.shards) !== shards.length) throw new Error(`${where}: cluster ${cluster} has ${row!.shards} shards in its remote_servers, ${shards.length} are given`);
      if (Number(row!.weighted) > 0) throw new Error(`${where}: cluster ${cluster} gives shards weights other than 1 (rows are placed by svc_id modulo the number of shards)`);
      if (row!.here.length !== 1 || Number(row!.here[0]) !== index + 1) {
        throw new Error(`${where} is ${row!.here.length === 0 ? 'in no shard' : `shard ${row!.here.join(', ')}`} of cluster ${cluster}: give the shards in the cluster's order`);
      }
    }
  }
}

/**
 * Refuses a database laid out otherwise than asked: made on one shard (plain `events`) given
 * shards, or made with shards given one.
 */
export async function checkLayout(node: ClickHouseClient, database: string, sharded: boolean): Promise<void> {
  const query = `SELECT name, engine FROM system.tables WHERE database = currentDatabase() AND name IN ('events', 'events_local')`;
  const tables = new Map((await (await node.query({ query, format: 'JSONEachRow' })).json<{ name: string; engine: string }>()).map((row) => [row.name, row.engine]));
  const madeSharded = tables.has('events_local');
  if (sharded && tables.has('events') && !madeSharded) throw new Error(`ClickHouse database ${database} was made on one shard (its events are not split): shards need a database of their own (docs/engines.md)`);
  if (!sharded && madeSharded) throw new Error(`ClickHouse database ${database} was made with shards: give them (--clickhouse-shard, --clickhouse-cluster)`);
}
