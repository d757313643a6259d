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

/** Reads a result's chunks: `row` gets each row's column vectors and index. */
export async function eachRow(result: DuckDBResult, row: (columns: DuckDBVector[], index: number) => void, stop = () => false): Promise<void> {
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0 && !stop(); chunk = await result.fetchChunk()) {
    const columns = Array.from({ length: chunk.columnCount }, (_, i) => chunk.getColumnVector(i));
    // rowCount asks the native chunk each time.
    const rows = chunk.rowCount;
    for (let index = 0; index < rows; index++) row(columns, index);
  }
}
