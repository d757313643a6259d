// An exported event (the Export API's lines) as the batch upload's event, and
// `importFromExport`: a project's exported events sent to another project (of this service or
// of the platform) through the batch API. The fields the batch API takes are copied under its
// names; svc_id is left out (the target rebuilds identities), and so are the fields the target
// sets itself (server times, uuid, app).
import { intOption } from './batching.js';
import { lenient, type AppClient, type IngestClient } from './clients.js';
import { exportEvents, type ExportEventsOptions } from './export-events.js';
import type { IngestionComponents } from './generated/roles.js';
import { uploadEvents, type UploadEventsOptions, type UploadFailure } from './upload.js';

export type UploadEvent = IngestionComponents['schemas']['EventRecord'];
export type GroupIdentification = IngestionComponents['schemas']['GroupIdentification'];

/** What an exported event becomes: an event for /batch, group identifications for /groupidentify, or nothing and why. */
export type Converted = { event: UploadEvent } | { groups: GroupIdentification[] } | { skipped: string };

/**
 * The event properties the platform's export files carry an event's revenue fields under, with
 * the batch API's field of each: an export writes them there, an import reads them back.
 */
export const REVENUE_PROPERTIES = [
  ['$price', 'price'],
  ['$quantity', 'quantity'],
  ['$revenue', 'revenue'],
  ['$productId', 'productId'],
  ['$revenueType', 'revenueType'],
] as const;

/** Fields copied as they are when they hold a value of the type the batch API takes. */
const TEXT_FIELDS = ['event_type', 'user_id', 'device_id', 'platform', 'os_name', 'os_version', 'device_brand', 'device_manufacturer', 'device_model', 'country', 'region', 'city', 'dma', 'language', 'idfa', 'adid', 'library', 'partner_id'] as const;
const NUMBER_FIELDS = ['session_id', 'event_id', 'location_lat', 'location_lng'] as const;
const OBJECT_FIELDS = ['event_properties', 'user_properties', 'groups', 'plan'] as const;
/** The export's names of fields the batch API names otherwise. */
const RENAMED = [
  ['version_name', 'app_version'],
  ['device_carrier', 'carrier'],
  ['ip_address', 'ip'],
] as const;

/** The property operations of `$identify` user properties (the batch API's UserProperties). */
const PROPERTY_OPERATIONS = new Set(['$set', '$setOnce', '$add', '$append', '$prepend', '$unset', '$clearAll']);

const EXPORT_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;

/** ms since the epoch of the export's UTC time text `YYYY-MM-DD HH:MM:SS.ffffff`. */
export function exportTimeMs(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const match = EXPORT_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = Number((match[7] ?? '0').padEnd(6, '0').slice(0, 3));
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isEmptyObject = (value: Record<string, unknown>) => Object.keys(value).length === 0;

/**
 * `$groupidentify` lines without user and device are what the Group Identify API stored: they
 * go back through it, one identification per group of the line.
 */
function groupIdentifications(line: Record<string, unknown>): Converted {
  const groups = isObject(line.groups) ? line.groups : {};
  const properties = isObject(line.group_properties) ? line.group_properties : {};
  const identifications: GroupIdentification[] = [];
  for (const [groupType, value] of Object.entries(groups)) {
    for (const groupValue of Array.isArray(value) ? value : [value]) {
      if (typeof groupValue === 'string') identifications.push({ group_type: groupType, group_value: groupValue, group_properties: properties });
    }
  }
  return identifications.length > 0 ? { groups: identifications } : { skipped: '$groupidentify without a group' };
}

/**
 * An `$identify` line's user properties are the user's after it (as every line's are at its
 * event): sent as `$clearAll` then `$set` of them, the target's profile becomes exactly that,
 * properties the identify removed included. A line that holds operations (an older export of
 * this service wrote what the event carried) is sent as it is.
 */
function identifyOperations(properties: Record<string, unknown>): Record<string, unknown> {
  if (Object.keys(properties).some((key) => PROPERTY_OPERATIONS.has(key))) return properties;
  return { $clearAll: '-', $set: properties };
}

/** The upload event of a parsed line; `insert_id` is the line's `$insert_id`, else its `uuid` (so that a repeated import stores nothing twice). */
export function convertExportedEvent(line: unknown): Converted {
  if (!isObject(line)) return { skipped: 'not a JSON object' };
  if (typeof line.event_type !== 'string' || line.event_type === '') return { skipped: 'no event_type' };
  const hasId = typeof line.user_id === 'string' || typeof line.device_id === 'string';
  if (!hasId && line.event_type === '$groupidentify') return groupIdentifications(line);
  if (!hasId) return { skipped: 'no user_id or device_id' };
  const time = exportTimeMs(line.event_time) ?? exportTimeMs(line.client_event_time);
  if (time === undefined) return { skipped: 'no event_time' };
  // Built as JSON text's object: every key written below is a fixed field name, never a user's.
  const event: Record<string, unknown> = { event_type: line.event_type, time };
  const insertId = typeof line.$insert_id === 'string' ? line.$insert_id : line.uuid;
  if (typeof insertId === 'string') event.insert_id = insertId;
  for (const field of TEXT_FIELDS) if (typeof line[field] === 'string') event[field] = line[field];
  for (const field of NUMBER_FIELDS) if (typeof line[field] === 'number') event[field] = line[field];
  for (const field of OBJECT_FIELDS) {
    const value = line[field];
    if (isObject(value) && !isEmptyObject(value)) event[field] = value;
  }
  if (line.event_type === '$identify' && isObject(line.user_properties)) event.user_properties = identifyOperations(line.user_properties);
  for (const [exported, uploaded] of RENAMED) if (typeof line[exported] === 'string') event[uploaded] = line[exported];
  if (line.event_type === '$groupidentify' && isObject(line.group_properties) && !isEmptyObject(line.group_properties)) event.group_properties = line.group_properties;
  if (isObject(line.event_properties)) {
    const properties = new Map(Object.entries(line.event_properties));
    for (const [property, field] of REVENUE_PROPERTIES) {
      const value = properties.get(property);
      if (value !== undefined && value !== null) event[field] = value;
    }
  }
  return { event: event as UploadEvent };
}

export interface ImportFromExportOptions extends ExportEventsOptions {
  /** Events handed to `uploadEvents` at once (it sends them 2000 a request); default 10,000. */
  chunkEvents?: number;
  /**
   * How the events are uploaded (requests in flight, retries; `resendValid` is `true` unless
   * given: an event the target refuses fails alone); `min_id_length` is 1: ids the source
   * accepted are taken.
   */
  upload?: Omit<UploadEventsOptions, 'signal' | 'min_id_length' | 'path'>;
  /** Hears the summary after each chunk. */
  onProgress?: (summary: ImportFromExportSummary) => void;
}

export interface ImportFromExportSummary {
  /** Exported events read. */
  read: number;
  /** Events the target acknowledged (stored, or already stored under their insert_id). */
  uploaded: number;
  /** Group identifications the target acknowledged. */
  groupsIdentified: number;
  /** Exported events not sent, by reason. */
  skipped: Map<string, number>;
  /** Events the target did not accept, with its last answer. */
  failures: (Omit<UploadFailure, 'indexes'> & { events: UploadEvent[] })[];
}

/** Group identifications per /groupidentify request, at most. */
const GROUPS_PER_REQUEST = 1000;

/**
 * Every event `source` exported from `start` to `end` (hours `YYYYMMDDTHH`, UTC, both included;
 * see `exportEvents`) sent to the project of `target` through `POST /batch`, a chunk at a time;
 * the Group Identify API's own lines go back through `POST /groupidentify`. The events keep
 * their insert_id (the exported `$insert_id`, else `uuid`), so running it again stores nothing
 * twice. Answers the target refuses end up in `failures`, as `uploadEvents` reports them; an
 * export that cannot be read throws the `ResponseError` of its status.
 */
export async function importFromExport(source: AppClient, target: IngestClient, start: string, end: string, options: ImportFromExportOptions = {}): Promise<ImportFromExportSummary> {
  const chunkEvents = intOption(options.chunkEvents, 10_000, 'chunkEvents', 1);
  const summary: ImportFromExportSummary = { read: 0, uploaded: 0, groupsIdentified: 0, skipped: new Map(), failures: [] };
  let events: UploadEvent[] = [];
  let groups: GroupIdentification[] = [];
  const flush = async () => {
    for (let at = 0; at < groups.length; at += GROUPS_PER_REQUEST) {
      const identification = groups.slice(at, at + GROUPS_PER_REQUEST);
      const { response, error } = await lenient(target).POST('/groupidentify', { body: { identification }, ...(options.signal ? { signal: options.signal } : {}) });
      if (response.ok) summary.groupsIdentified += identification.length;
      else count(summary.skipped, `group identification: ${response.status} ${errorText(error)}`.trim(), identification.length);
    }
    const uploaded = await uploadEvents(target, events, { resendValid: true, ...options.upload, min_id_length: 1, ...(options.signal ? { signal: options.signal } : {}) });
    summary.uploaded += uploaded.eventsIngested;
    for (const { indexes, ...failure } of uploaded.failures) summary.failures.push({ ...failure, events: indexes.map((index) => events[index]!) });
    [events, groups] = [[], []];
    options.onProgress?.(summary);
  };
  for await (const exported of exportEvents(source, start, end, options)) {
    summary.read++;
    const converted = convertExportedEvent(exported);
    if ('skipped' in converted) count(summary.skipped, converted.skipped);
    else if ('event' in converted) events.push(converted.event);
    else groups.push(...converted.groups);
    if (events.length >= chunkEvents || groups.length >= GROUPS_PER_REQUEST) await flush();
  }
  if (events.length > 0 || groups.length > 0) await flush();
  return summary;
}

const count = (counts: Map<string, number>, reason: string, n = 1) => counts.set(reason, (counts.get(reason) ?? 0) + n);
const errorText = (error: unknown) => (typeof error === 'object' && error !== null && typeof (error as { error?: unknown }).error === 'string' ? (error as { error: string }).error : '');
