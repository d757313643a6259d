// The Export API's line: one stored event as the platform's export files write it. Every field
// of the platform's lines, keys in the order of their names (as the platform's files have them),
// the platform's own ID fields under the service's `svc_` names, null where nothing is stored.
// One table says where each field comes from; the line is written from it in JavaScript (the
// ClickHouse engine, from rows) and by DuckDB's JSON writer (duckdb/export-lines.ts: an event
// then crosses as one value, not as fifty). JSON columns are spliced in as their stored text.
// The event's revenue fields (columns named as the batch API's fields) go among the event
// properties under the names the platform's files use (@svc/client's REVENUE_PROPERTIES, which
// its importer reads back). `user_properties`, `paying` and `start_version` are the user's at the
// event, as reporting reads them: columns each engine adds to the rows (user-at-event.ts).
import { REVENUE_PROPERTIES } from '@svc/client';
import { AT_EVENT } from './user-at-event.js';

/** Where a field of the line comes from. */
export type ExportSource =
  /** A text column, as a JSON string (null when NULL). */
  | { text: string }
  /** A numeric column, as a JSON number (null when NULL). */
  | { number: string }
  /** A boolean column, as JSON true or false (null when NULL). */
  | { boolean: string }
  /**
   * A JSON column, as stored; the platform writes its object fields as `{}` when empty, never
   * null. `revenue`: with the event's revenue fields added (withRevenueProperties).
   */
  | { object: string; revenue?: true }
  /** A column of ms since the epoch, as the platform's UTC time text `YYYY-MM-DD HH:MM:SS.ffffff`. */
  | { time: string }
  /** The event's uuid (exportUuid). */
  | { uuid: true }
  /** The same JSON text on every line. */
  | { json: string };

const NONE = { json: 'null' } as const;
const EMPTY = { json: '{}' } as const;

/** The fields of a line, in the order of their names (code points). */
export const EXPORT_FIELDS: readonly (readonly [string, ExportSource])[] = [
  ['$insert_id', { text: 'insert_id' }],
  ['$schema', NONE],
  ['adid', { text: 'adid' }],
  ['app', { number: 'app_id' }],
  ['city', { text: 'city' }],
  ['client_event_time', { time: 'time' }],
  ['client_upload_time', NONE],
  ['country', { text: 'country' }],
  ['data', EMPTY],
  ['data_type', { json: '"event"' }],
  ['device_brand', { text: 'device_brand' }],
  ['device_carrier', { text: 'carrier' }],
  ['device_family', NONE],
  ['device_id', { text: 'device_id' }],
  ['device_manufacturer', { text: 'device_manufacturer' }],
  ['device_model', { text: 'device_model' }],
  ['device_type', NONE],
  ['dma', { text: 'dma' }],
  ['event_id', { number: 'event_id' }],
  ['event_properties', { object: 'event_properties', revenue: true }],
  ['event_time', { time: 'time' }],
  ['event_type', { text: 'event_type' }],
  ['global_user_properties', EMPTY],
  ['group_properties', { object: 'group_properties' }],
  ['groups', { object: 'groups' }],
  ['idfa', { text: 'idfa' }],
  ['ip_address', { text: 'ip' }],
  ['is_attribution_event', NONE],
  ['language', { text: 'language' }],
  ['library', NONE],
  ['location_lat', { number: 'location_lat' }],
  ['location_lng', { number: 'location_lng' }],
  ['os_name', { text: 'os_name' }],
  ['os_version', { text: 'os_version' }],
  ['partner_id', NONE],
  ['paying', { boolean: AT_EVENT.paying }],
  ['plan', { object: 'plan' }],
  ['platform', { text: 'platform' }],
  ['processed_time', NONE],
  ['region', { text: 'region' }],
  ['sample_rate', NONE],
  ['server_received_time', { time: 'server_upload_time' }],
  ['server_upload_time', { time: 'server_upload_time' }],
  ['session_id', { number: 'session_id' }],
  ['source_id', NONE],
  ['start_version', { text: AT_EVENT.startVersion }],
  ['svc_attribution_ids', NONE],
  ['svc_event_type', NONE],
  ['svc_id', { number: 'svc_id' }],
  ['user_creation_time', NONE],
  ['user_id', { text: 'user_id' }],
  ['user_properties', { object: AT_EVENT.userProperties }],
  ['uuid', { uuid: true }],
  ['version_name', { text: 'app_version' }],
];


const computed = new Set<string>(Object.values(AT_EVENT));
/** The stored columns the user's state at the event is computed from. */
const USER_STATE_COLUMNS = ['svc_id', 'ingest_seq', 'event_type', 'user_properties'];

/** The stored columns the lines are written from (the uuid's and the user's state's among them). */
export const EXPORT_COLUMNS: readonly string[] = [
  ...new Set(
    [
      ...EXPORT_FIELDS.flatMap(([, source]) =>
        'text' in source ? [source.text]
        : 'number' in source ? [source.number]
        : 'object' in source ? [source.object, ...(source.revenue ? REVENUE_PROPERTIES.map(([, column]) => column) : [])]
        : 'time' in source ? [source.time]
        : 'uuid' in source ? ['app_id', 'ingest_seq']
        : [],
      ),
      ...USER_STATE_COLUMNS,
    ].filter((column) => !computed.has(column)),
  ),
];
/** Those of them that hold JSON, read as their text. */
export const EXPORT_JSON_COLUMNS: readonly string[] = [...EXPORT_FIELDS.flatMap(([, source]) => ('object' in source && !computed.has(source.object) ? [source.object] : [])), 'user_properties'];

/** `YYYY-MM-DD HH:MM:SS.ffffff` of UTC (stored times have milliseconds). */
export function utcTimeText(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000`;
}

/** utcTimeText as a JSON string. */
export function exportTime(ms: unknown): string {
  if (ms === null || ms === undefined) return 'null';
  return `"${utcTimeText(Number(ms))}"`;
}

const hex = (value: number, digits: number) => value.toString(16).padStart(digits, '0');

/**
 * The event's `uuid`: nothing is stored for it, so it is made from the project and the event's
 * place in storage (`ingest_seq`), unique and the same in every export of the event. Laid out
 * as an RFC 9562 version 8 UUID (`aaaaaaaa-ssss-8sss-8sss-00000000ssss`, 56 bits of ingest_seq).
 */
export function exportUuid(appId: number, ingestSeq: number): string {
  const seq = hex(ingestSeq, 14);
  return `${hex(appId >>> 0, 8)}-${seq.slice(0, 4)}-8${seq.slice(4, 7)}-8${seq.slice(7, 10)}-00000000${seq.slice(10)}`;
}

/**
 * Stored event properties (JSON text) with the event's revenue fields that they lack added last,
 * under the platform's names; the stored text is kept as it is, not written again.
 */
export function withRevenueProperties(text: string | null | undefined, row: Record<string, unknown>): string {
  const stored = text ?? '{}';
  const present = REVENUE_PROPERTIES.filter(([, column]) => row[column] !== null && row[column] !== undefined);
  if (present.length === 0) return stored;
  const properties = JSON.parse(stored) as Record<string, unknown>;
  const pairs = present.filter(([name]) => !Object.hasOwn(properties, name)).map(([name, column]) => `${JSON.stringify(name)}:${JSON.stringify(row[column])}`);
  if (pairs.length === 0) return stored;
  return stored === '{}' ? `{${pairs.join(',')}}` : `${stored.slice(0, -1)},${pairs.join(',')}}`;
}

const key = (name: string) => JSON.stringify(name);
const read = (column: string) => `row[${JSON.stringify(column)}]`;

/** The JavaScript expression of a field's value text. */
function jsValue(source: ExportSource): string {
  if ('text' in source) return `(${read(source.text)} == null ? 'null' : JSON.stringify(String(${read(source.text)})))`;
  if ('number' in source) return `(${read(source.number)} == null ? 'null' : String(Number(${read(source.number)})))`;
  if ('boolean' in source) return `(${read(source.boolean)} == null ? 'null' : ${read(source.boolean)} ? 'true' : 'false')`;
  if ('object' in source) return source.revenue ? `revenue(${read(source.object)}, row)` : `(${read(source.object)} ?? '{}')`;
  if ('time' in source) return `time(${read(source.time)})`;
  if ('uuid' in source) return `('"' + uuid(Number(row.app_id), Number(row.ingest_seq)) + '"')`;
  return JSON.stringify(source.json);
}

/**
 * One line (without its newline) of a row of EXPORT_COLUMNS (JSON columns as text). Unrolled
 * over the fields once: it runs for every exported event.
 */
export const exportLine = new Function(
  'time',
  'uuid',
  'revenue',
  `return (row) => '{' + ${EXPORT_FIELDS.map(([name, source], i) => `'${i === 0 ? '' : ','}${key(name)}:' + ${jsValue(source)}`).join(' + ')} + '}';`,
)(exportTime, exportUuid, withRevenueProperties) as (row: Record<string, unknown>) => string;
