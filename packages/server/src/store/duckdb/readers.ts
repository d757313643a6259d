// Connections for reporting queries. A DuckDB connection runs one query at a time: a query
// started on a connection closes the pending result of the one before it, which then reads
// as empty. Each query borrows a connection of its own, and waits for one when all are busy.
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

export class DuckDbReaders {
  private readonly idle: DuckDBConnection[] = [];
  private readonly waiting: ((connection: DuckDBConnection) => void)[] = [];
  private opened = 0;
  private closed = false;

  constructor(
    private readonly instance: DuckDBInstance,
    /** At most this many queries at once: the project limit's 5 at a time, a few projects beside. */
    private readonly size = 8,
  ) {}

  /** Runs `work` on a connection no other query uses meanwhile. */
  async with<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection = await this.acquire();
    try {
      return await work(connection);
    } finally {
      this.release(connection);
    }
  }

  /** Streams a query's chunks on a borrowed connection, returned when the stream ends or is left. */
  async *stream<T>(work: (connection: DuckDBConnection) => AsyncIterable<T>): AsyncIterable<T> {
    const connection = await this.acquire();
    try {
      yield* work(connection);
    } finally {
      this.release(connection);
    }
  }

  private async acquire(): Promise<DuckDBConnection> {
    if (this.closed) throw new Error('the store is closed');
    const connection = this.idle.pop();
    if (connection) return connection;
    if (this.opened < this.size) {
      this.opened++;
      return this.instance.connect().catch((error: unknown) => {
        this.opened--;
        throw error;
      });
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(connection: DuckDBConnection): void {
    const next = this.waiting.shift();
    if (next) next(connection);
    else if (this.closed) connection.closeSync();
    else this.idle.push(connection);
  }

  /** Closes the idle connections; the busy ones close when their query ends. */
  close(): void {
    this.closed = true;
    for (const connection of this.idle.splice(0)) connection.closeSync();
  }
}
