// What the Export API reads of the stored events, once for both engines: the SQL of the hours and
// of one range's rows (the columns its lines are written from, export-lines.ts) in each engine's
// words, and the estimate of an export's size that the 4 GB limit is judged on.
import { EXPORT_COLUMNS, EXPORT_JSON_COLUMNS, exportLine } from './export-lines.js';
import type { ExportHourSummary } from './types.js';

export const HOUR_MS = 3_600_000;

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
  /** A join of the events to `profile_bytes`, the length of their user's stored profile (as `svc_id`). */
  profileBytesJoin(appId: number): string;
}

export const quoted = (column: string) => `"${column}"`;
export const rangeCondition = (appId: number, fromMs: number, toMs: number) =>
  `app_id = ${Math.trunc(appId)} AND server_upload_time >= ${Math.trunc(fromMs)} AND server_upload_time < ${Math.trunc(toMs)}`;

/**
 * The hours of [fromMs, toMs) with events of the project: `hour`, `event_count`, `json_bytes`:
 * the JSON columns' text and the user's properties a line carries, the user's profile as it is
 * now (the one in force at an event is most often no larger: profiles grow).
 */
export function exportHoursSql(words: ExportSqlWords, appId: number, fromMs: number, toMs: number): string {
  const jsonBytes = EXPORT_JSON_COLUMNS.map((column) => words.bytesOf(words.textOf(quoted(column)))).join(' + ');
  return `SELECT ${words.hourOf('server_upload_time')} AS hour, count(*) AS event_count, sum(${jsonBytes} + coalesce(profile_bytes, 0)) AS json_bytes
    FROM events ${words.profileBytesJoin(appId)} WHERE ${rangeCondition(appId, fromMs, toMs)} GROUP BY hour ORDER BY hour`;
}

/** The order of an export's lines: server upload time, then ingestion. */
export const EXPORT_ORDER = 'ORDER BY server_upload_time, ingest_seq';

/** The project's events of [fromMs, toMs) in export order, the columns the lines are written from (and `extra` ones). */
export function exportRowsSql(words: ExportSqlWords, appId: number, fromMs: number, toMs: number, extra: readonly string[] = []): string {
  const json = new Set(EXPORT_JSON_COLUMNS);
  const columns = [...EXPORT_COLUMNS, ...extra].map((column) => (json.has(column) ? `${words.textOf(quoted(column))} AS ${quoted(column)}` : quoted(column)));
  return `SELECT ${columns.join(', ')} FROM events WHERE ${rangeCondition(appId, fromMs, toMs)} ${EXPORT_ORDER}`;
}

const PLUS = 43;
const QUOTE = 34;
const BACKSLASH = 92;

/**
 * The line with its numbers' exponents as DuckDB's writer prints them (`1e21`, `1.5e300`), which
 * JavaScript writes `1e+21`: both engines' lines are the same bytes. Outside strings, a `+` in
 * JSON is only ever an exponent's sign.
 */
export function withoutExponentPlus(line: string): string {
  let [kept, from, inString] = ['', 0, false];
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === PLUS) [kept, from] = [kept + line.slice(from, i), i + 1];
  }
  return from === 0 ? line : kept + line.slice(from);
}

/** A chunk of rows as the text of their lines, each ending with a newline. */
export function linesText(rows: readonly Record<string, unknown>[]): string {
  let text = '';
  for (const row of rows) {
    const line = exportLine(row);
    // Rare: numbers from 1e21 up (a text holding "e+" is left as it is).
    text += `${line.includes('e+') ? withoutExponentPlus(line) : line}\n`;
  }
  return text;
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
