// One exported line (the Export API's ExportedEvent) as the batch upload's event: the fields
// the batch API takes, under its names. svc_id is left out (the target rebuilds identities),
// and so are the fields the target sets itself (server times, uuid, app).
import type { components } from '../../generated/ingestion.js';
import { REVENUE_PROPERTIES } from '../../store/export-lines.js';

export type UploadEvent = components['schemas']['EventRecord'];
export type GroupIdentification = components['schemas']['GroupIdentification'];

/** What a line becomes: an event for /batch, group identifications for /groupidentify, or nothing and why. */
export type Converted = { event: UploadEvent } | { groups: GroupIdentification[] } | { skipped: string };

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

/** The upload event of a parsed line; `insert_id` is the line's `$insert_id`, else its `uuid` (so that a repeated import stores nothing twice). */
export function convertLine(line: unknown): Converted {
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
