// The events table on ClickHouse (the second engine, issue 14; Debian's 18.16 is the oldest
// server it must run on): the columns of DuckDB's `events` (EVENT_COLUMNS) plus `svc_id` and
// `ingest_seq`, created by the code through numbered migrations recorded in
// `schema_versions`; an insert path for events whose identities are already resolved, and the
// project's events read back in ingestion order.
//
// Exact `insert_id` dedupe stays in the server, not in the table engine: the insert_id window
// (src/ingestion/dedupe.ts) drops a repeat before it reaches the journal, so only unique events
// are ever inserted here. A ReplacingMergeTree would not replace it: it collapses repeats only
// when a background merge happens to join the parts that hold them (at an unknown time, never
// across partitions), so until then totals count repeats (uniques do not); reading with FINAL
// merges at query time and is far slower (single-threaded on 18.16); its key would have to be
// `(app_id, insert_id)`, which is not the order reporting scans need; and events without an
// insert_id would have nothing to collapse by. Plain MergeTree keeps each event once by
// construction and sorts by what reporting filters on.
import { type ClickHouseClient, ClickHouseLogLevel, type ClickHouseSettings, createClient } from '@clickhouse/client';
import { EVENT_COLUMNS } from '../journal-line.js';
import type { LoadedEvent, StoredEvent } from '../types.js';
import { fanOut } from './fan-out.js';
import { Replicas } from './replicas.js';
import { migrate } from './schema.js';
import { ShardStore } from './shard-store.js';
import { checkCluster, isSplit, shardOf } from './shards.js';
import { engineTables, LOAD_OWNERSHIP_TABLES, LOCAL_NAMES, localDayTables, reportingTables, SAME_NAMES, type TableNames, userActivityTables, userSummaryTables } from './tables.js';

/** An event as inserted: identities resolved (`svc_id`) and its place in ingestion order. */
export type ResolvedEvent = StoredEvent & { svc_id: number | null; ingest_seq: number };

const TYPES: Record<string, string> = { INTEGER: 'Int32', BIGINT: 'Int64', DOUBLE: 'Float64', VARCHAR: 'String', JSON: 'String', BOOLEAN: 'UInt8' };
/** Never NULL in a stored event; the sorting key's columns must not be Nullable on 18.16. */
const NOT_NULL = new Set<string>(['app_id', 'event_type', 'time', 'server_upload_time', 'skip_user_properties_sync']);
const JSON_COLUMNS = new Set(Object.keys(EVENT_COLUMNS).filter((name) => EVENT_COLUMNS[name as keyof StoredEvent] === 'JSON'));
const BOOLEAN_COLUMNS = new Set(Object.keys(EVENT_COLUMNS).filter((name) => EVENT_COLUMNS[name as keyof StoredEvent] === 'BOOLEAN'));

/** Column → ClickHouse type: EVENT_COLUMNS' order, then `svc_id` and `ingest_seq`. JSON is kept as its text. */
export const CLICKHOUSE_EVENT_COLUMNS: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries(EVENT_COLUMNS).map(([name, type]) => {
      const base = TYPES[type];
      if (!base) throw new Error(`No ClickHouse type for ${type}`);
      return [name, NOT_NULL.has(name) ? base : `Nullable(${base})`];
    }),
  ),
  svc_id: 'Nullable(Int64)',
  ingest_seq: 'Int64',
};
const quote = (name: string) => `\`${name}\``;
const selectList = [...Object.keys(EVENT_COLUMNS), 'svc_id'].map(quote).join(', ');
/**
 * The columns an insert of events writes, in its rows' order: the event's, then the journal
 * segment it came from (migration 2) and the split properties (migration 3, splitProperties).
 */
export const INSERTED_EVENT_COLUMNS: Record<string, string> = {
  ...CLICKHOUSE_EVENT_COLUMNS,
  segment: 'String',
  property_keys: 'Array(String)',
  property_values: 'Array(String)',
  user_property_keys: 'Array(String)',
  user_property_values: 'Array(String)',
};

/** Events to insert, as rows of INSERTED_EVENT_COLUMNS in RowBinary: their ids a chunk at a time, each chunk encoded when the insert pulls it. */
export interface EventRows {
  count: number;
  chunks: AsyncIterable<readonly number[]>;
  /** Splits the rows across shards. */
  svcIdOf(row: number): number | null;
  encode(rows: readonly number[]): Buffer;
}

/**
 * Sorted by project, event type and time: reporting scans one project's events of one type
 * (or a few) over a time range; months as partitions keep parts of old data apart.
 */
const eventsTable = (t: TableNames) => `CREATE TABLE IF NOT EXISTS ${t('events')} (${Object.entries(CLICKHOUSE_EVENT_COLUMNS)
  .map(([name, type]) => `${quote(name)} ${type}`)
  .join(', ')}) ENGINE = MergeTree() PARTITION BY toYYYYMM(toDateTime(intDiv(time, 1000))) ORDER BY (app_id, event_type, time) SETTINGS index_granularity = 8192`;

/**
 * The schema, one step per version (schema.ts runs them): a step's statements are idempotent
 * (`IF NOT EXISTS`, an added column skipped when it exists, aggregate rows that may come twice),
 * since ClickHouse has no transactions: a step cut short by a crash runs again whole.
 */
export const migrations = (t: TableNames): readonly (readonly string[])[] => [[eventsTable(t)], engineTables(t), reportingTables(t), LOAD_OWNERSHIP_TABLES, userActivityTables(t), userSummaryTables(t), localDayTables(t)];

export interface ClickHouseOptions {
  /** The server's HTTP URL, e.g. `http://127.0.0.1:8123`. */
  url: string;
  /**
   * The HTTP URLs of the other replicas of the shard `url` is a replica of: the tables are
   * ReplicatedMergeTree (each server needs ZooKeeper and the macros `shard` and `replica`), and
   * the engine moves to the next replica when the one in use does not answer (replicas.ts).
   */
  replicaUrls?: readonly string[];
  /**
   * The replicas of each further shard (`url`'s is the first): the events are split across the
   * shards by user (shards.ts), read whole through Distributed tables over `cluster`.
   */
  shardUrls?: readonly (readonly string[])[];
  /** The cluster in the servers' `remote_servers` that lists the shards, in this order (needed with `shardUrls`). */
  cluster?: string;
  /** Created if missing; `default` when not given. */
  database?: string;
  /** Lines of a journal segment the engine parses and encodes at a time while loading it (default 2,000). */
  loadChunkLines?: number;
  /** The insert_id window (ms) within which a repeat another process received is dropped at load (default 7 days). */
  insertIdWindowMs?: number;
  /** How long a mutation (merges, deletions, a torn segment's removal) is waited for (default 10 minutes). */
  mutationTimeLimitMs?: number;
  /** Takes the operator's messages: which replica is in use when one did not answer. */
  log?: (message: string) => void;
}

type Row = Record<string, unknown>;

function loadedEvent(row: Row): LoadedEvent {
  for (const name of JSON_COLUMNS) if (typeof row[name] === 'string') row[name] = JSON.parse(row[name] as string);
  for (const name of BOOLEAN_COLUMNS) row[name] = row[name] === 1;
  return row as unknown as LoadedEvent;
}

const integer = (value: number) => {
  if (!Number.isSafeInteger(value)) throw new Error(`Not an integer: ${value}`);
  return String(value);
};

/** How long a request to ClickHouse may take before the client gives up (one hour). */
const REPORTING_QUERY_TIMEOUT_MS = 3_600_000;

/** A split table on a shard: the shard, and the table's name there. */
export interface ShardTable {
  shard: ShardStore;
  table: string;
}

export class ClickHouseEvents {
  private constructor(
    /** The first shard holds every table that is not split (the only one without shards). */
    private readonly shards: readonly ShardStore[],
    private readonly sharded: boolean,
  ) {}

  private get first(): ShardStore {
    return this.shards[0]!;
  }

  /**
   * Connects, creates the database where missing and brings the schema of each replica that
   * answers to the latest version; a shard none of whose replicas answers fails the open.
   */
  static async open(options: ClickHouseOptions): Promise<ClickHouseEvents> {
    const database = options.database ?? 'default';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) throw new Error(`Not a database name: ${database}`);
    const shardUrls = [[options.url, ...(options.replicaUrls ?? [])], ...(options.shardUrls ?? [])];
    const { cluster } = options;
    if (shardUrls.length > 1 && cluster === undefined) throw new Error('ClickHouse shards need the cluster that lists them for the Distributed tables (--clickhouse-cluster)');
    const replicated = shardUrls.some((urls) => urls.length > 1);
    const log = { level: ClickHouseLogLevel.OFF };
    for (const urls of shardUrls) {
      const bootstrap = new Replicas(urls.map((url) => createClient({ url, log })), urls, false);
      try {
        const answering = await bootstrap.answering();
        // None answers: the last one's failure says why.
        if (answering.length === 0) await bootstrap.read((client) => client.command({ query: 'SELECT 1' }));
        for (const client of answering) await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
      } finally {
        await bootstrap.close();
      }
    }
    const settings = {
      // 64-bit integers as JSON numbers (the values stored are below 2^53).
      output_format_json_quote_64bit_integers: 0 as const,
      // A replicated table drops an insert of the same rows as one of its last 100 by default:
      // a segment loaded again after its torn rows were deleted must be kept.
      insert_deduplicate: 0 as const,
      // A subquery over a split table inside a read of one is computed whole (shards.ts).
      ...(cluster === undefined ? {} : { distributed_product_mode: 'global' as const }),
    };
    // The client's default 30 s cut reporting questions that DuckDB answers in time (session
    // lengths over 10M events took longer): a query runs as long as the engine needs, as on DuckDB.
    const shards = shardUrls.map((urls, index) => {
      const clients = urls.map((url) => createClient({ url, database, clickhouse_settings: settings, log, request_timeout: REPORTING_QUERY_TIMEOUT_MS }));
      return new ShardStore(new Replicas(clients, urls, replicated, options.log), index, cluster !== undefined && index > 0);
    });
    const events = new ClickHouseEvents(shards, cluster !== undefined);
    try {
      const answering = await Promise.all(shards.map((shard) => shard.answering()));
      if (cluster !== undefined) await checkCluster(answering, shardUrls, cluster);
      await migrate({ shards: answering, replicated, cluster }, migrations, database);
    } catch (error) {
      await events.close();
      throw error;
    }
    return events;
  }

  /** The schema version the database is at on the replica in use (0: nothing created yet). */
  async schemaVersion(): Promise<number> {
    const [row] = await this.query('SELECT max(version) AS version FROM schema_versions');
    return Number(row?.version ?? 0);
  }

  /** Runs a read on the replica in use of the first shard, or on the next ones when it does not answer. */
  read<T>(call: (client: ClickHouseClient) => Promise<T>): Promise<T> {
    return this.first.read(call);
  }

  /** Runs a statement that changes data on the first shard's replica in use (on the next ones only when refused unsent). */
  write<T>(call: (client: ClickHouseClient) => Promise<T>): Promise<T> {
    return this.first.write(call);
  }

  /**
   * Waits until reads hold what every replica wrote before now (replicas.ts); nothing on one
   * server. The other shards are read through the Distributed tables, from any of their replicas.
   */
  async fetchOtherReplicas(): Promise<void> {
    for (const shard of this.shards) await shard.fetchOtherReplicas();
  }

  /** A statement without rows (ALTER, INSERT … SELECT) on the first shard. */
  command(sql: string, settings?: ClickHouseSettings): Promise<void> {
    return this.first.command(sql, settings);
  }

  /** Where a table's rows are: on every shard for a split table (each its own part), else on the first. */
  shardsOf(table: string): ShardTable[] {
    if (!this.sharded || !isSplit(table)) return [{ shard: this.first, table }];
    return this.shards.map((shard) => ({ shard, table: LOCAL_NAMES(table) }));
  }

  /** Runs a statement on the split tables of each shard (`names`: theirs there; on one server, as they are). */
  async onEveryShard(statement: (names: TableNames) => string): Promise<void> {
    if (!this.sharded) return this.first.command(statement(SAME_NAMES));
    for (const shard of this.shards) {
      await shard.command(statement(LOCAL_NAMES));
      await shard.written();
    }
  }

  /**
   * Inserts events (already deduplicated and resolved) in one INSERT per shard, visible once
   * this resolves: a chunk or two of rows and their bytes exist at a time (per shard).
   * RowBinary, not JSONEachRow: 18.16 reads floats in text inexactly (row-binary.ts).
   */
  async insertRows(rows: EventRows): Promise<void> {
    if (rows.count === 0) return;
    async function* encoded(chunks: AsyncIterable<readonly number[]>) {
      for await (const chunk of chunks) yield rows.encode(chunk);
    }
    const columns = Object.keys(INSERTED_EVENT_COLUMNS);
    if (!this.sharded) return this.first.insertRowBinary('events', columns, encoded(rows.chunks), rows.count);
    const sends = this.shards.map((shard) => (chunks: AsyncIterable<number[]>) => shard.insertRowBinary(LOCAL_NAMES('events'), columns, encoded(chunks), rows.count));
    await fanOut(rows.chunks, (row) => shardOf(rows.svcIdOf(row), this.shards.length), sends);
    for (const shard of this.shards) await shard.written();
  }

  /** The project's events in ingestion order. */
  async events(appId: number): Promise<LoadedEvent[]> {
    const rows = await this.query(`SELECT ${selectList} FROM events WHERE app_id = ${integer(appId)} ORDER BY ingest_seq`);
    return rows.map(loadedEvent);
  }

  /** Rows of a query (64-bit integers as numbers), on the first shard. */
  query(sql: string): Promise<Row[]> {
    return this.first.query(sql);
  }

  /** Rows of a large query, a chunk at a time as they arrive (ShardStore.queryChunks). */
  queryChunks(sql: string): AsyncIterable<Row[]> {
    return this.first.queryChunks(sql);
  }

  /** The bytes of a query's answer (ShardStore.queryBytes), on the first shard. */
  queryBytes(sql: string): AsyncIterable<Buffer> {
    return this.first.queryBytes(sql);
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((shard) => shard.close()));
  }
}
