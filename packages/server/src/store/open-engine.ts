// Opening the configured storage engine and the SQL session of the entity stores.
import { ClickHouseEngine } from './clickhouse/engine.js';
import { DuckDbEngine } from './duckdb.js';
import { journalId } from './journal-id.js';
import { postgresLoadLock } from './load-lock.js';
import { postgresSession } from './postgres/sql-session.js';
import type { CohortMembers, Engine, SqlSession, StreamedEvents, UserData } from './types.js';

/** What the server's engine provides. */
export type ServerEngine = Engine & UserData & StreamedEvents & CohortMembers;

/** The engine settings of the server's configuration (see ServerConfig). */
export interface EngineConfig {
  dataDir: string;
  engine: 'duckdb' | 'clickhouse';
  postgresUrl?: string;
  clickhouseUrl?: string;
  clickhouseDatabase?: string;
}

export interface OpenedEngine {
  engine: ServerEngine;
  /** The SQL of the entity stores. */
  entitySql: SqlSession;
  /** Closes what the engine does not (the PostgreSQL session); the engine closes with the journalled store. */
  close(): Promise<void>;
}

export async function openEngine(config: EngineConfig): Promise<OpenedEngine> {
  const postgres = config.postgresUrl === undefined ? undefined : postgresSession(config.postgresUrl);
  if (config.engine === 'duckdb') {
    const engine = await DuckDbEngine.open(config.dataDir);
    return { engine, entitySql: postgres ?? engine.sql, close: async () => postgres?.close() };
  }
  if (postgres === undefined) throw new Error('The ClickHouse engine needs PostgreSQL for the other entities: give postgresUrl (--postgres-url)');
  if (config.clickhouseUrl === undefined) {
    await postgres.close();
    throw new Error('The ClickHouse engine needs clickhouseUrl (--clickhouse-url)');
  }
  // Several processes may load into this database: their loads take turns on PostgreSQL.
  const loading = { loadLock: postgresLoadLock(postgres), journalId: await journalId(config.dataDir) };
  const engine = await ClickHouseEngine.open({ url: config.clickhouseUrl, database: config.clickhouseDatabase }, postgres, loading);
  return { engine, entitySql: postgres, close: () => postgres.close() };
}
