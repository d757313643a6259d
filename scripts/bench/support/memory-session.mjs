// A SqlSession on an in-memory DuckDB database: the ClickHouse engine's shared entity store in
// the engine benches (PostgreSQL in production; the loads barely touch it).
import { DuckDBInstance } from '@duckdb/node-api';

export async function memorySession() {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const run = async (sql, values) => void (await connection.run(sql, values));
  const rows = async (sql, values) => (await connection.runAndReadAll(sql, values)).getRowObjectsJS();
  return { rows, run, transaction: (work) => work({ rows, run }), close: () => instance.closeSync() };
}
