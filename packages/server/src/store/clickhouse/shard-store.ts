// One shard of the ClickHouse database as the engine calls it: its replicas (replicas.ts), one
// in use, and the calls every table of the shard takes (reads, statements, a streamed insert).
// On one server the database is one shard; with shards (shards.ts) the first one also holds
// every table that is not split.
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { Readable } from 'node:stream';
import type { Replicas } from './replicas.js';

type Row = Record<string, unknown>;

/** How long a replica is given to fetch what the others wrote before a load reads it. */
const REPLICA_FETCH_TIME_LIMIT_MS = 30_000;

export class ShardStore {
  constructor(
    private readonly replicas: Replicas,
    /** Its place among the shards (0: the first), for messages. */
    readonly index: number,
    /**
     * Whether it is read through Distributed tables, which may take any of its replicas (the
     * shards after the first; the first is read on its replica in use).
     */
    private readonly readAnyReplica = false,
  ) {}

  /** Runs a read on the replica in use, or on the next ones when it does not answer. */
  read<T>(call: (client: ClickHouseClient) => Promise<T>): Promise<T> {
    return this.replicas.read(call);
  }

  /** Runs a statement that changes data on the replica in use (on the next ones only when refused unsent). */
  write<T>(call: (client: ClickHouseClient) => Promise<T>): Promise<T> {
    return this.replicas.write(call);
  }

  /** A statement without rows (ALTER, INSERT … SELECT), with settings of its own. */
  async command(sql: string, settings?: ClickHouseSettings): Promise<void> {
    await this.write((client) => client.command({ query: sql, clickhouse_settings: settings }));
  }

  /** Rows of a query (64-bit integers as numbers). */
  async query(sql: string): Promise<Row[]> {
    return this.read(async (client) => {
      const rows: Row[] = [];
      const result = await client.query({ query: sql, format: 'JSONEachRow' });
      for await (const chunk of result.stream<Row>()) for (const row of chunk) rows.push(row.json());
      return rows;
    });
  }

  /**
   * Rows of a large query, a chunk at a time as they arrive; sent again on another replica
   * only until the answer starts.
   */
  async *queryChunks(sql: string): AsyncIterable<Row[]> {
    const result = await this.read((client) => client.query({ query: sql, format: 'JSONEachRow' }));
    for await (const rows of result.stream<Row>()) yield rows.map((row) => row.json());
  }

  /**
   * The bytes of a query's answer in the format its text names, sent once computed whole (so
   * that a failure is an error, never text among the rows); sent again on another replica only
   * until the answer starts.
   */
  async *queryBytes(sql: string): AsyncIterable<Buffer> {
    const result = await this.read((client) => client.exec({ query: sql, clickhouse_settings: { wait_end_of_query: 1 } }));
    for await (const chunk of result.stream) yield chunk as Buffer;
  }

  /**
   * One INSERT of RowBinary rows read from `chunks` as the request is sent: never sent again on
   * another replica (its chunks may be half read; the load fails and runs again).
   */
  async insertRowBinary(table: string, columns: readonly string[], chunks: AsyncIterable<Buffer>, rows: number): Promise<void> {
    await this.replicas.write(async (client) => {
      const result = await client.exec({
        query: `INSERT INTO ${table} (${columns.map((name) => `\`${name}\``).join(', ')}) FORMAT RowBinary`,
        // One chunk read ahead (the default is 16): encoded rows wait no longer than the socket takes them.
        values: Readable.from(chunks, { highWaterMark: 1 }),
        // One block per partition however many rows the segment holds (the default splits at 1,048,576).
        clickhouse_settings: { max_insert_block_size: String(Math.max(rows, 1_048_576)) },
      });
      result.stream.resume();
      await new Promise((resolve, reject) => result.stream.on('end', resolve).on('error', reject));
    }, true);
  }

  /**
   * Waits until what a load reads next holds what every replica wrote before now: the replica
   * in use, or, when reads may take any replica, each replica that answers.
   */
  fetchOtherReplicas(): Promise<void> {
    return this.replicas.fetchOthers(REPLICA_FETCH_TIME_LIMIT_MS, this.readAnyReplica);
  }

  /**
   * Waits until every replica that answers holds what was written to the replica in use, when
   * reads may take any of them: else a question right after a load (or a mutation) could read
   * a replica that has not fetched it yet, and a stream of events by ingest_seq skip past it.
   */
  async written(): Promise<void> {
    if (this.readAnyReplica) await this.fetchOtherReplicas();
  }

  /** The replicas that answer now. */
  answering(): Promise<ClickHouseClient[]> {
    return this.replicas.answering();
  }

  close(): Promise<unknown> {
    return this.replicas.close();
  }
}
