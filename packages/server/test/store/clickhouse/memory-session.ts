// A SqlSession on an in-memory DuckDB database: the shared entity store of the ClickHouse
// engine in tests (PostgreSQL in production).
import { DuckDBInstance } from '@duckdb/node-api';
import type { SqlSession, SqlValue } from '../../../src/store/types.js';

export async function memorySession(): Promise<SqlSession & { close(): void }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  // Bound one by one: DuckDB cannot infer the type of a NULL given in a values list (e.g. under ON CONFLICT).
  const prepared = async (sql: string, values: SqlValue[] = []) => {
    const statement = await connection.prepare(sql);
    values.forEach((value, i) => {
      if (value === null) statement.bindNull(i + 1);
      else if (typeof value === 'string') statement.bindVarchar(i + 1, value);
      else if (typeof value === 'boolean') statement.bindBoolean(i + 1, value);
      else if (Number.isInteger(value)) statement.bindBigInt(i + 1, BigInt(value));
      else statement.bindDouble(i + 1, value);
    });
    return statement;
  };
  const direct = {
    rows: async (sql: string, values?: SqlValue[]) => {
      const rows = (await (await prepared(sql, values)).runAndReadAll()).getRowObjectsJS();
      for (const row of rows) for (const [key, value] of Object.entries(row)) if (typeof value === 'bigint') row[key] = Number(value);
      return rows as Record<string, unknown>[];
    },
    run: async (sql: string, values?: SqlValue[]) => void (await (await prepared(sql, values)).run()),
  };
  return {
    rows: (sql, values) => serial(() => direct.rows(sql, values)),
    run: (sql, values) => serial(() => direct.run(sql, values)),
    transaction: (work) =>
      serial(async () => {
        await connection.run('BEGIN TRANSACTION');
        try {
          const result = await work(direct);
          await connection.run('COMMIT');
          return result;
        } catch (error) {
          await connection.run('ROLLBACK');
          throw error;
        }
      }),
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}
