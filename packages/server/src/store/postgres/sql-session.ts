// A `SqlSession` on PostgreSQL, for the entity stores when several server processes share
// them: the stores' `?` placeholders become `$n`, and values come back as DuckDB's session
// gives them (integers and numerics as numbers, JSON as its text).
import pg from 'pg';
import type { SqlSession, SqlValue } from '../types.js';

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** Values as numbers: the stores' BIGINTs (ids, epoch ms, counts) are far below 2^53. */
const number = (text: string) => Number(text);
const asText = (text: string) => text;
const PARSERS = new Map<number, (text: string) => unknown>([
  [pg.types.builtins.INT8, number],
  [pg.types.builtins.NUMERIC, number],
  [pg.types.builtins.JSON, asText],
  [pg.types.builtins.JSONB, asText],
]);
const types = { getTypeParser: ((oid: number, format?: 'text' | 'binary') => PARSERS.get(oid) ?? pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser };

/** `?` → `$1`, `$2`, ... outside string literals and quoted names. */
export function numberedPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\?/g, (match) => (match === '?' ? `$${++n}` : match));
}

function sessionOn(target: Queryable): Omit<SqlSession, 'transaction'> {
  const query = (sql: string, values?: SqlValue[]) => target.query({ text: values?.length ? numberedPlaceholders(sql) : sql, values, types });
  return {
    rows: async (sql, values) => (await query(sql, values)).rows as Record<string, unknown>[],
    run: async (sql, values) => void (await query(sql, values)),
  };
}

/**
 * Prefixes a script without parameters (the stores' CREATE statements): processes that create
 * the same tables at once take turns, as `IF NOT EXISTS` does not guard concurrent creation
 * (concurrent first uses fail with duplicate keys in pg_class without it). A script
 * of several statements runs as one transaction, which holds the lock to its end.
 */
const SCRIPT_LOCK = 'SELECT pg_advisory_xact_lock(7305227001);\n';

export interface PostgresSession extends SqlSession {
  /**
   * `work` in a READ COMMITTED transaction that first takes the advisory lock (`space`, `key`):
   * holders of one lock take turns, and every statement after the lock sees what the previous
   * holder committed. Counts checked then raised by many processes at once (the reporting
   * limits) need it: a SERIALIZABLE snapshot is taken before the lock is waited for, and the
   * work after it conflicts with the holder before: every such conflict is a run again.
   */
  inTurn<T>(space: number, key: number, work: Work<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Serialization failure and deadlock: the transaction is run again. Several server processes
 * share these tables, and the stores check before they write (a category's name is free, a
 * cursor is where it was read): at READ COMMITTED two processes both passed the check.
 */
const RETRIED_STATES = new Set(['40001', '40P01']);
const ATTEMPTS = 5;

type Work<T> = (session: Omit<SqlSession, 'transaction'>) => Promise<T>;

/** `work` in a transaction opened by `begin` on a connection of the pool. */
async function transactionOn<T>(pool: pg.Pool, begin: string, work: Work<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A checked-out connection's error (the server stopping) is emitted on it, not on the pool:
  // unheard, it ended the process; the query in flight fails and the connection is dropped.
  const onError = (error: Error) => (broken = error);
  client.on('error', onError);
  try {
    await client.query(begin);
    const result = await work(sessionOn(client));
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((failed: Error) => (broken = failed));
    throw error;
  } finally {
    // A connection whose rollback failed is closed rather than reused.
    client.off('error', onError);
    client.release(broken);
  }
}

/** Runs `attempt` again (up to ATTEMPTS times) when PostgreSQL cancels it for a conflict with another transaction. */
async function retried<T>(attempt: () => Promise<T>): Promise<T> {
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt();
    } catch (error) {
      if (attempts === ATTEMPTS || !RETRIED_STATES.has((error as { code?: string }).code ?? '')) throw error;
    }
  }
}

/**
 * A session on a pool of connections to `url`; a transaction holds one of them until it ends.
 * Transactions are SERIALIZABLE, and `work` runs again (up to ATTEMPTS times) when PostgreSQL
 * cancels it for a conflict with another's, so `work` must only act through its session.
 */
export function postgresSession(url: string, options: { maxConnections?: number } = {}): PostgresSession {
  const pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10 });
  // An idle connection's error (server restart) must not end the process; the next query reconnects.
  pool.on('error', () => undefined);
  const direct = sessionOn(pool);
  return {
    rows: direct.rows,
    run: (sql, values) => direct.run(values?.length ? sql : SCRIPT_LOCK + sql, values),
    transaction: <T>(work: Work<T>) => retried(() => transactionOn(pool, 'BEGIN ISOLATION LEVEL SERIALIZABLE', work)),
    inTurn: <T>(space: number, key: number, work: Work<T>) =>
      retried(() =>
        transactionOn(pool, 'BEGIN', async (session) => {
          await session.rows('SELECT pg_advisory_xact_lock($1::int, $2::int)', [space, key]);
          return work(session);
        }),
      ),
    close: () => pool.end(),
  };
}
