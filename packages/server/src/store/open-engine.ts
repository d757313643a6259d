// Opening the configured storage engine and the SQL session of the entity stores. The modules
// of the engine and of PostgreSQL are imported when configured: the engine's process imports
// them anew at every start, and those of an engine not configured are a cost for nothing.
import type { CohortMembers, Engine, ExportedEvents, SqlSession, StreamedEvents, UserData } from './types.js';

/** What the server's engine provides. */
export type ServerEngine = Engine & UserData & StreamedEvents & CohortMembers & ExportedEvents;

/** The engine settings of the server's configuration (see ServerConfig). */
export interface EngineConfig {
  dataDir: string;
  engine: 'duckdb' | 'clickhouse';
  postgresUrl?: string;
  clickhouseUrl?: string;
  /** The other replicas of `clickhouseUrl`'s shard. */
  clickhouseReplicaUrls?: string[];
  /** The replicas of each further shard, and the cluster that lists the shards. */
  clickhouseShardUrls?: string[][];
  clickhouseCluster?: string;
  clickhouseDatabase?: string;
  /** DuckDB's memory limit (e.g. `1GB`); DuckDB's default when not given. */
  duckdbMemoryLimit?: string;
  /** The most bytes the DuckDB engine's timelines may hold; its default when not given. */
  timelineMemoryBytes?: number;
  /** The ingestion's insert_id window (ms), which the ClickHouse engine applies across processes at load. */
  insertIdWindowMs?: number;
}

export interface OpenedEngine {
  engine: ServerEngine;
  /** The SQL of the entity stores. */
  entitySql: SqlSession;
  /** Closes what the engine does not (the PostgreSQL session); the engine closes with the journalled store. */
  close(): Promise<void>;
}

/** Opens the engine of `config`; `log` takes its operator-facing messages (background work that failed). */
export async function openEngine(config: EngineConfig, log: (message: string) => void): Promise<OpenedEngine> {
  const postgres = config.postgresUrl === undefined ? undefined : (await import('./postgres/sql-session.js')).postgresSession(config.postgresUrl);
  if (config.engine === 'duckdb') {
    const { DuckDbEngine } = await import('./duckdb/engine.js');
    const engine = await DuckDbEngine.open(config.dataDir, log, { memoryLimit: config.duckdbMemoryLimit, timelineMemoryBytes: config.timelineMemoryBytes });
    return { engine, entitySql: postgres ?? engine.sql, close: async () => postgres?.close() };
  }
  if (postgres === undefined) throw new Error('The ClickHouse engine needs PostgreSQL for the other entities: give postgresUrl (--postgres-url)');
  if (config.clickhouseUrl === undefined) {
    await postgres.close();
    throw new Error('The ClickHouse engine needs clickhouseUrl (--clickhouse-url)');
  }
  const [{ ClickHouseEngine }, { postgresLoadLock }, { journalId }] = await Promise.all([import('./clickhouse/engine.js'), import('./load-lock.js'), import('./journal-id.js')]);
  // Several processes may load into this database: their loads take turns on PostgreSQL.
  const loading = { loadLock: postgresLoadLock(postgres), journalId: await journalId(config.dataDir) };
  const engine = await ClickHouseEngine.open({ url: config.clickhouseUrl, replicaUrls: config.clickhouseReplicaUrls, shardUrls: config.clickhouseShardUrls, cluster: config.clickhouseCluster, database: config.clickhouseDatabase, insertIdWindowMs: config.insertIdWindowMs, log }, postgres, loading);
  return { engine, entitySql: postgres, close: () => postgres.close() };
}
