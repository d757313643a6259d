// The Export API on DuckDB: the hours of a range and the lines of one. DuckDB writes the lines
// itself (store/export-lines.ts says what they hold) with its JSON writer, from a struct whose
// fields are the line's in order: each event reaches JavaScript as one text rather than as the
// fifty values it is written from, and the text is the one the JavaScript writer makes. The
// user's state at each event (../user-at-event.ts) comes from an ASOF join on the profile
// versions and a summary of each user's events, both of the range's users only.
import { REVENUE_PROPERTIES } from '@svc/client';
import { EXPORT_FIELDS, type ExportSource } from '../export-lines.js';
import { EVENT_COLUMNS } from '../journal-line.js';
import { EXPORT_ORDER, type ExportSqlWords, quoted, rangeCondition } from '../exported-events.js';
import { AT_EVENT } from '../user-at-event.js';
import { userSummariesSql } from './user-summaries.js';

/** DuckDB's words for the statements of the hours. */
export const DUCKDB_EXPORT_WORDS: ExportSqlWords = {
  hourOf: (column) => `(${column} // 3600000)`,
  textOf: (column) => `CAST(${column} AS VARCHAR)`,
  bytesOf: (text) => `coalesce(strlen(${text}), 0)`,
  profileBytesJoin: (appId) => `LEFT JOIN (SELECT svc_id, strlen(CAST(properties AS VARCHAR)) AS profile_bytes FROM profiles WHERE app_id = ${Math.trunc(appId)}) USING (svc_id)`,
};

/**
 * A column as JSON, numbers as JavaScript writes them: DuckDB writes a whole DOUBLE with `.0`
 * (`45.0`), so those up to 2^53 (exact as BIGINT) are written as BIGINT, and larger ones below
 * 1e21 (where both switch to exponents) without the `.0`.
 */
function jsonOf(column: string): string {
  const value = quoted(column);
  if (EVENT_COLUMNS[column as keyof typeof EVENT_COLUMNS] !== 'DOUBLE') return `to_json(${value})`;
  const text = `to_json(${value})::VARCHAR`;
  return `CASE WHEN ${value} = trunc(${value}) AND abs(${value}) <= ${2 ** 53} THEN to_json(${value}::BIGINT)
    WHEN ${value} = trunc(${value}) AND abs(${value}) < 1e21 THEN substr(${text}, 1, length(${text}) - 2)::JSON ELSE to_json(${value}) END`;
}

const seq = quoted('ingest_seq');
const UUID = `printf('%08x-%04x-8%03x-8%03x-00000000%04x', ${quoted('app_id')}, (${seq} >> 40) & 65535, (${seq} >> 28) & 4095, (${seq} >> 16) & 4095, ${seq} & 65535)`;

/** The stored properties (JSON) with the revenue fields they lack added last, as withRevenueProperties writes them. */
function withRevenue(column: string): string {
  const stored = `coalesce(${quoted(column)}, '{}'::JSON)`;
  const pairs = REVENUE_PROPERTIES.map(
    ([name, field]) => `CASE WHEN ${quoted(field)} IS NOT NULL AND NOT list_contains(json_keys(${stored}), '${name}') THEN '"${name}":' || ${jsonOf(field)}::VARCHAR END`,
  );
  const added = `concat_ws(',', ${pairs.join(', ')})`;
  const text = `${stored}::VARCHAR`;
  return `(CASE WHEN ${added} = '' THEN ${text} WHEN ${text} = '{}' THEN '{' || ${added} || '}' ELSE substr(${text}, 1, length(${text}) - 1) || ',' || ${added} || '}' END)::JSON`;
}

/** A field's value in the struct: JSON columns and JSON constants typed JSON, so that the writer embeds them as they are. */
function value(source: ExportSource): string {
  if ('text' in source) return quoted(source.text);
  if ('number' in source) return jsonOf(source.number);
  if ('boolean' in source) return quoted(source.boolean);
  if ('object' in source) return source.revenue ? withRevenue(source.object) : `coalesce(${quoted(source.object)}, '{}'::JSON)`;
  if ('time' in source) return `strftime(epoch_ms(${quoted(source.time)}), '%Y-%m-%d %H:%M:%S.%f')`;
  if ('uuid' in source) return UUID;
  return `'${source.json}'::JSON`;
}

const LINE = `to_json({${EXPORT_FIELDS.map(([name, source]) => `'${name}': ${value(source)}`).join(', ')}})::VARCHAR`;

const EMPTY = `'{}'::JSON`;
/**
 * The user properties at the event (the rule of user-at-event.ts): map_concat keeps the first
 * map's keys in order, a key of the second taking its value, then the second's other keys.
 */
const USER_PROPERTIES = `CASE WHEN e.event_type = '$identify' THEN coalesce(p.properties, ${EMPTY})
  WHEN p.properties IS NULL OR p.properties = ${EMPTY} THEN coalesce(e.user_properties, ${EMPTY})
  WHEN e.user_properties IS NULL OR e.user_properties = ${EMPTY} THEN p.properties
  ELSE to_json(map_concat(CAST(p.properties AS MAP(VARCHAR, JSON)), CAST(e.user_properties AS MAP(VARCHAR, JSON)))) END`;

/**
 * The lines (column `line`) of the project's events of [fromMs, toMs), in export order. The ASOF
 * join runs on narrow rows, and only for events of users with profile versions: on the wide rows
 * it sorted every column (a quarter more time for the export's statement). Each user's first
 * app_version and first revenue come from the rows kept at load (user-summaries.ts).
 */
export function exportLinesSql(appId: number, fromMs: number, toMs: number): string {
  const range = rangeCondition(appId, fromMs, toMs);
  const ofUsers = `app_id = ${Math.trunc(appId)} AND svc_id IN (SELECT svc_id FROM events WHERE ${range})`;
  return `WITH v AS (SELECT svc_id, ingest_seq, properties FROM profile_versions WHERE ${ofUsers})
  SELECT ${LINE} AS line FROM (
    SELECT e.*, ${USER_PROPERTIES} AS ${AT_EVENT.userProperties},
      CASE WHEN e.svc_id IS NOT NULL THEN coalesce(json_extract_string(p.properties, '/paying') = 'true', h.first_paid <= e.ingest_seq, false) END AS ${AT_EVENT.paying},
      coalesce(json_extract_string(p.properties, '/start_version'), h.start_version) AS ${AT_EVENT.startVersion}
    FROM (SELECT * FROM events WHERE ${range}) e
    LEFT JOIN (SELECT r.ingest_seq AS seq, v.properties FROM (SELECT svc_id, ingest_seq FROM events WHERE ${range} AND svc_id IN (SELECT svc_id FROM v)) r
      ASOF JOIN v ON v.svc_id = r.svc_id AND r.ingest_seq >= v.ingest_seq) p ON p.seq = e.ingest_seq
    LEFT JOIN (${userSummariesSql(appId)}) h ON h.svc_id = e.svc_id
  ) ${EXPORT_ORDER}`;
}
