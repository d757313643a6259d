// Reading DuckDB results into JS and appending JS values to DuckDB tables, a slice at a time
// so that a large segment or result does not hold the event loop.
import type { DuckDBAppender, DuckDBConnection, DuckDBResult, DuckDBVector } from '@duckdb/node-api';
import { eachInSlices } from '../../shared/time-slice.js';
import type { LoadedEvent, SqlValue } from '../types.js';
import { JSON_COLUMNS } from './schema.js';

export type Row = Record<string, unknown>;

/** A statement's rows as JS objects (BIGINT columns as bigints). */
export async function rowsOf(connection: DuckDBConnection, sql: string, values?: SqlValue[]): Promise<Row[]> {
  const reader = await connection.runAndReadAll(sql, values as (string | number)[]);
  return reader.getRowObjectsJS() as Row[];
}

export function parseJsonColumns(row: Row): LoadedEvent {
  for (const name of JSON_COLUMNS) if (typeof row[name] === 'string') row[name] = JSON.parse(row[name] as string);
  for (const name of ['app_id', 'time', 'server_upload_time', 'session_id', 'event_id', 'quantity', 'svc_id']) {
    if (typeof row[name] === 'bigint') row[name] = Number(row[name]);
  }
  delete row.seq;
  delete row.ingest_seq;
  return row as unknown as LoadedEvent;
}

/** BIGINT columns as numbers (the values reporting reads are far below 2^53). */
export function numbersOf(rows: Row[]): Row[] {
  for (const row of rows) for (const [key, value] of Object.entries(row)) if (typeof value === 'bigint') row[key] = Number(value);
  return rows;
}

/** Appends one row per item, yielding to the event loop every few thousand: a segment can hold many. */
export async function appendAll<T>(appender: DuckDBAppender, items: readonly T[], append: (item: T, index: number) => void): Promise<void> {
  await eachInSlices(items, (item, index) => {
    append(item, index);
    appender.endRow();
  });
  appender.closeSync();
}

type Cell = string | number | null;

/** Appends rows to a new temp table shaped as `like`'s `columns` (numbers as BIGINT, cast on append). */
async function appendedTemp(connection: DuckDBConnection, name: string, like: string, columns: string, rows: readonly Cell[][]): Promise<void> {
  await connection.run(`CREATE OR REPLACE TEMP TABLE ${name} AS SELECT ${columns} FROM ${like} LIMIT 0`);
  const appender = await connection.createAppender(name, 'main', 'temp');
  await appendAll(appender, rows, (row) => {
    for (const value of row) {
      if (value === null) appender.appendNull();
      else if (typeof value === 'number') appender.appendBigInt(BigInt(value));
      else appender.appendVarchar(value);
    }
  });
}

/**
 * Writes rows into `table` in one statement (a row at a time costs milliseconds each), through
 * the temp table `<table>_changes`, which later statements of the load may read; no rows: no
 * statement, no temp table. `INSERT OR REPLACE`: rows whose primary key is stored replace them.
 */
async function writeRows(connection: DuckDBConnection, verb: 'INSERT' | 'INSERT OR REPLACE', table: string, columns: string, rows: readonly Cell[][]): Promise<void> {
  if (rows.length === 0) return;
  await appendedTemp(connection, `${table}_changes`, table, columns, rows);
  await connection.run(`${verb} INTO ${table} (${columns}) SELECT ${columns} FROM ${table}_changes`);
}

/** Inserts rows into `table` in one statement (`writeRows`). */
export const insertRows = (connection: DuckDBConnection, table: string, columns: string, rows: readonly Cell[][]) => writeRows(connection, 'INSERT', table, columns, rows);

/** Inserts or replaces rows of `table` (its primary key decides) in one statement (`writeRows`). */
export const upsertRows = (connection: DuckDBConnection, table: string, columns: string, rows: readonly Cell[][]) => writeRows(connection, 'INSERT OR REPLACE', table, columns, rows);

/** The `columns` of the rows of `table` whose `keys` columns hold one of `values`, in one join. */
export async function rowsWithKeys(connection: DuckDBConnection, table: string, keys: string, values: readonly Cell[][], columns: string): Promise<Row[]> {
  if (values.length === 0) return [];
  await appendedTemp(connection, `${table}_keys`, table, keys, values);
  return rowsOf(connection, `SELECT ${columns} FROM ${table} JOIN ${table}_keys USING (${keys})`);
}

/** Reads a result's chunks: `row` gets each row's column vectors and index. */
export async function eachRow(result: DuckDBResult, row: (columns: DuckDBVector[], index: number) => void, stop = () => false): Promise<void> {
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0 && !stop(); chunk = await result.fetchChunk()) {
    const columns = Array.from({ length: chunk.columnCount }, (_, i) => chunk.getColumnVector(i));
    // rowCount asks the native chunk each time.
    const rows = chunk.rowCount;
    for (let index = 0; index < rows; index++) row(columns, index);
  }
}
