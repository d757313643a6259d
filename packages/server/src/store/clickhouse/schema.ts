// The schema's numbered migrations, run on every replica the server reaches at start. Each
// replica records its own version (`schema_versions` is a local TinyLog). On replicas the
// tables are ReplicatedMergeTree, their rows and ALTERs shared through ZooKeeper while each
// replica creates its own tables and views: so a CREATE runs on every replica behind, an ADD
// COLUMN once (the others have the column when it returns), and a migration's INSERT of
// derived rows once. A replica that creates a table the others hold already copies their
// current definition (`SHOW CREATE TABLE`): ZooKeeper refuses a replica of other columns.
//
// With shards each shard runs the migrations on its replicas (shards.ts): the first shard all of
// them, the others those of the split tables.
import type { ClickHouseClient } from '@clickhouse/client';
import { checkLayout, shardSteps } from './shards.js';
import { literal } from './sql-text.js';
import { LOCAL_NAMES, SAME_NAMES, type TableNames } from './tables.js';

const SCHEMA_VERSIONS = 'CREATE TABLE IF NOT EXISTS schema_versions (version UInt32, applied_at UInt64) ENGINE = TinyLog';

type Row = Record<string, unknown>;

async function rows(client: ClickHouseClient, sql: string): Promise<Row[]> {
  return (await client.query({ query: sql, format: 'JSONEachRow' })).json<Row>();
}

/**
 * A CREATE TABLE's MergeTree family engine as its replicated twin, its rows kept in ZooKeeper
 * under the shard's path (the macros `shard` and `replica` of each server name them).
 */
export function replicatedDdl(statement: string, database: string): string {
  const table = /^CREATE TABLE IF NOT EXISTS (\w+)/.exec(statement)?.[1];
  if (table === undefined) return statement;
  return statement.replace(/ENGINE = (\w*)MergeTree\(\)/, (_, kind: string) => `ENGINE = Replicated${kind}MergeTree('/clickhouse/tables/{shard}/${database}/${table}', '{replica}')`);
}

async function version(client: ClickHouseClient): Promise<number> {
  await client.command({ query: SCHEMA_VERSIONS });
  const [row] = await rows(client, 'SELECT max(version) AS version FROM schema_versions');
  return Number(row?.version ?? 0);
}

/** Whether the statement adds a column that exists (18.16 has no `ADD COLUMN IF NOT EXISTS`). */
async function columnExists(client: ClickHouseClient, statement: string): Promise<boolean> {
  const added = /^ALTER TABLE (\w+) ADD COLUMN (\w+)/.exec(statement);
  if (!added) return false;
  const [row] = await rows(client, `SELECT count() AS n FROM system.columns WHERE database = currentDatabase() AND table = ${literal(added[1]!)} AND name = ${literal(added[2]!)}`);
  return Number(row!.n) > 0;
}

async function tableDefinition(client: ClickHouseClient, table: string): Promise<string | undefined> {
  const [held] = await rows(client, `SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = ${literal(table)}`);
  if (Number(held!.n) === 0) return undefined;
  const [shown] = await rows(client, `SHOW CREATE TABLE ${table}`);
  return String(shown!.statement);
}

/** Creates a table on a replica behind: as another replica holds it now, or as the migration writes it. */
async function create(node: ClickHouseClient, statement: string, nodes: readonly ClickHouseClient[], database: string): Promise<void> {
  const table = /^CREATE TABLE IF NOT EXISTS (\w+)/.exec(statement)?.[1];
  // Views are each replica's own, as written.
  if (table === undefined) return void (await node.command({ query: statement }));
  if ((await tableDefinition(node, table)) !== undefined) return;
  for (const other of nodes) {
    const definition = other === node ? undefined : await tableDefinition(other, table);
    if (definition !== undefined) return void (await node.command({ query: definition }));
  }
  await node.command({ query: replicatedDdl(statement, database) });
}

/**
 * A database made on one server (its tables not replicated) given replicas later: copying
 * its tables would make unreplicated copies that answer empty once the first server is down.
 */
async function refuseUnreplicated(node: ClickHouseClient, database: string): Promise<void> {
  const plain = await rows(node, "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' AND engine NOT LIKE 'Replicated%' ORDER BY name");
  if (plain.length === 0) return;
  throw new Error(
    `ClickHouse database ${database} holds tables that are not replicated (${plain.map((row) => row.name).join(', ')}), made with one --clickhouse-url: ` +
      'replicas need a database of their own (converting one is not supported; docs/engines.md)',
  );
}

/** The servers a migration runs on: each shard's replicas that answer, the first shard first. */
export interface MigrationLayout {
  shards: readonly (readonly ClickHouseClient[])[];
  /** Whether the tables are replicated (a shard given more than one replica). */
  replicated: boolean;
  /** The cluster of the Distributed tables, when the events are split across shards. */
  cluster?: string;
}

/** Brings every server of `layout` to the last of the migrations (written with the tables' names given). */
export async function migrate(layout: MigrationLayout, migrations: (names: TableNames) => readonly (readonly string[])[], database: string): Promise<void> {
  const { cluster, replicated } = layout;
  for (const [index, nodes] of layout.shards.entries()) {
    for (const node of nodes) await checkLayout(node, database, cluster !== undefined);
    const steps = cluster === undefined ? migrations(SAME_NAMES) : shardSteps(migrations(LOCAL_NAMES), index === 0, cluster, database);
    await migrateShard(nodes, steps, database, replicated);
  }
}

/** Brings each of `nodes`, the replicas of one shard (`replicated`) or one server, to the last step. */
async function migrateShard(nodes: readonly ClickHouseClient[], migrations: readonly (readonly string[])[], database: string, replicated: boolean): Promise<void> {
  if (replicated) for (const node of nodes) await refuseUnreplicated(node, database);
  const versions = new Map<ClickHouseClient, number>();
  for (const node of nodes) versions.set(node, await version(node));
  for (let step = 1; step <= migrations.length; step++) {
    const behind = nodes.filter((node) => versions.get(node)! < step);
    if (behind.length === 0) continue;
    for (const statement of migrations[step - 1]!) {
      if (statement.startsWith('CREATE ')) {
        for (const node of behind) await (replicated ? create(node, statement, nodes, database) : node.command({ query: statement }));
      } else if (statement.startsWith('ALTER ')) {
        for (const node of behind) if (!(await columnExists(node, statement))) await node.command({ query: statement });
      } else {
        await behind[0]!.command({ query: statement });
      }
    }
    for (const node of behind) await node.insert({ table: 'schema_versions', values: [{ version: step, applied_at: Date.now() }], format: 'JSONEachRow' });
  }
}
