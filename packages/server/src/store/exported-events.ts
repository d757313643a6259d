// What the Export API reads of the stored events, once for both engines: the columns (its lines
// are written from them, src/export/lines.ts), the SQL of the hours and of one range's rows in
// each engine's words, and the estimate of an export's size that the 4 GB limit is judged on.
import type { ExportHourSummary } from './types.js';

export const HOUR_MS = 3_600_000;

/** The JSON columns, read as their text: the lines carry it as stored, never parsed and written again. */
export const EXPORT_JSON_COLUMNS = ['event_properties', 'user_properties', 'groups', 'group_properties', 'plan'] as const;

/** The other stored columns an exported line is written from. */
export const EXPORT_PLAIN_COLUMNS = [
  'app_id', 'insert_id', 'event_type', 'user_id', 'device_id', 'time', 'server_upload_time', 'session_id', 'event_id',
  'location_lat', 'location_lng', 'ip', 'idfa', 'adid', 'app_version', 'platform', 'os_name', 'os_version', 'device_brand',
  'device_manufacturer', 'device_model', 'carrier', 'country', 'region', 'city', 'dma', 'language', 'svc_id', 'ingest_seq',
] as const;

type JsonColumn = (typeof EXPORT_JSON_COLUMNS)[number];
type PlainColumn = (typeof EXPORT_PLAIN_COLUMNS)[number];

/** A stored event as the export reads it: the JSON columns as text, 64-bit integers as numbers. */
export type ExportRow = { [K in JsonColumn]: string | null } & { [K in PlainColumn]: unknown };

/**
 * Bytes of a line besides its JSON columns' text: its 54 keys and punctuation (about 800) and
 * the times, ids and short texts. The estimate errs high: a range near the limit is refused
 * rather than cut off after the answer started.
 */
export const LINE_BYTES_BESIDES_JSON = 1_200;

/** An engine's words for what the two statements need. */
export interface ExportSqlWords {
  /** The hour (ms since the epoch / 3,600,000) of a column of ms. */
  hourOf(column: string): string;
  /** A JSON column as its text. */
  textOf(column: string): string;
  /** The length in bytes of a text that may be NULL (0). */
  bytesOf(text: string): string;
}

const quoted = (column: string) => `"${column}"`;
const rangeCondition = (appId: number, fromMs: number, toMs: number) =>
  `app_id = ${Math.trunc(appId)} AND server_upload_time >= ${Math.trunc(fromMs)} AND server_upload_time < ${Math.trunc(toMs)}`;

/** The hours of [fromMs, toMs) with events of the project: `hour`, `event_count`, `json_bytes`. */
export function exportHoursSql(words: ExportSqlWords, appId: number, fromMs: number, toMs: number): string {
  const jsonBytes = EXPORT_JSON_COLUMNS.map((column) => words.bytesOf(words.textOf(quoted(column)))).join(' + ');
  return `SELECT ${words.hourOf('server_upload_time')} AS hour, count(*) AS event_count, sum(${jsonBytes}) AS json_bytes
    FROM events WHERE ${rangeCondition(appId, fromMs, toMs)} GROUP BY hour ORDER BY hour`;
}

/** The project's events of [fromMs, toMs) in the order of server upload time, then of ingestion. */
export function exportRowsSql(words: ExportSqlWords, appId: number, fromMs: number, toMs: number): string {
  const columns = [...EXPORT_PLAIN_COLUMNS.map(quoted), ...EXPORT_JSON_COLUMNS.map((column) => `${words.textOf(quoted(column))} AS ${quoted(column)}`)];
  return `SELECT ${columns.join(', ')} FROM events WHERE ${rangeCondition(appId, fromMs, toMs)} ORDER BY server_upload_time, ingest_seq`;
}

/** A row of `exportHoursSql` (its numbers may arrive as text). */
export const hourSummary = (row: Record<string, unknown>): ExportHourSummary => ({
  hourMs: Number(row.hour) * HOUR_MS,
  events: Number(row.event_count),
  jsonBytes: Number(row.json_bytes ?? 0),
});

/** The estimated size of the uncompressed lines of these hours. */
export const estimatedExportBytes = (hours: readonly ExportHourSummary[]): number =>
  hours.reduce((sum, hour) => sum + hour.jsonBytes + hour.events * LINE_BYTES_BESIDES_JSON, 0);
