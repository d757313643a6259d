// Doc 002's per-event rules: the 400 body of an upload (request-level `missing_field`, per
// field the indexes of events with invalid or missing values), and the stored form of an
// accepted event (derived device_id, default time, revenue, tracked groups).
import { hash } from 'node:crypto';
import type { RequestProblem } from '@svc/openapi-validation';
import type { components } from '../generated/ingestion.js';
import { dataRecord } from '../shared/data-record.js';

/** Property operations of `$identify` / `$groupidentify` (plain keys count as `$set`). */
export type PropertyOperations = Record<string, unknown>;

/** One event as stored: the record after the ingestion rules (ids, time, revenue, groups). */
export interface StoredEvent {
  app_id: number;
  insert_id: string | null;
  event_type: string;
  user_id: string | null;
  device_id: string | null;
  time: number;
  server_upload_time: number;
  session_id: number | null;
  event_id: number | null;
  event_properties: Record<string, unknown> | null;
  user_properties: PropertyOperations | null;
  groups: Record<string, string | string[]> | null;
  group_properties: PropertyOperations | null;
  skip_user_properties_sync: boolean;
  price: number | null;
  quantity: number | null;
  revenue: number | null;
  productId: string | null;
  revenueType: string | null;
  currency: string | null;
  location_lat: number | null;
  location_lng: number | null;
  ip: string | null;
  idfa: string | null;
  idfv: string | null;
  adid: string | null;
  android_id: string | null;
  android_app_set_id: string | null;
  plan: Record<string, string> | null;
  app_version: string | null;
  platform: string | null;
  os_name: string | null;
  os_version: string | null;
  device_brand: string | null;
  device_manufacturer: string | null;
  device_model: string | null;
  carrier: string | null;
  country: string | null;
  region: string | null;
  city: string | null;
  dma: string | null;
  language: string | null;
}

/** An event as loaded: with the `svc_id` of its user (null for group identification records). */
export type LoadedEvent = StoredEvent & { svc_id: number | null };

/** The platform's window: repeats of an insert_id within 7 days of its first receipt are dropped. */
export const DEFAULT_INSERT_ID_WINDOW_MS = 7 * 24 * 3_600_000;

export type EventRecord = components['schemas']['EventRecord'];
export type UploadRequest = components['schemas']['EventUploadRequest'];
export type InvalidUploadError = components['schemas']['InvalidUploadError'];

export interface EventRules {
  maxGroupTypes: number;
  maxGroups: number;
  defaultMinIdLength: number;
  /** Profile updates per user and rolling hour; later ones are dropped (the events are kept). */
  maxUserPropertyUpdatesPerHour: number;
  /** How long an insert_id is remembered (ms): its memory grows with the events received within it. */
  insertIdWindowMs: number;
}

export const DEFAULT_EVENT_RULES: EventRules = {
  maxGroupTypes: 5,
  maxGroups: 10,
  defaultMinIdLength: 5,
  maxUserPropertyUpdatesPerHour: 1800,
  insertIdWindowMs: DEFAULT_INSERT_ID_WINDOW_MS,
};

const INT32_MAX = 2 ** 31 - 1;

type Properties = Record<string, unknown> | undefined;

// Functions of their own, not closures made per event: uploads call them for every event.
const numberProperty = (properties: Properties, name: string) => (typeof properties?.[name] === 'number' ? (properties[name] as number) : null);
const stringProperty = (properties: Properties, name: string) => (typeof properties?.[name] === 'string' ? (properties[name] as string) : null);

/**
 * The revenue fields of an event. The platform's SDKs send them as `$price`, `$quantity`,
 * ... event properties; those are used when they are what the fields would accept.
 */
function revenueFields(event: EventRecord) {
  const properties = event.event_properties as Properties;
  const quantityProperty = numberProperty(properties, '$quantity');
  const price = event.price ?? numberProperty(properties, '$price');
  const quantity = event.quantity ?? (Number.isInteger(quantityProperty) && Math.abs(quantityProperty!) <= INT32_MAX ? quantityProperty : null) ?? (price !== null ? 1 : null);
  return {
    price,
    quantity,
    // price × quantity wins over a sent revenue (doc 002).
    revenue: price !== null ? price * (quantity ?? 1) : (event.revenue ?? numberProperty(properties, '$revenue')),
    productId: event.productId ?? stringProperty(properties, '$productId'),
    revenueType: event.revenueType ?? stringProperty(properties, '$revenueType'),
  };
}

class IndexesByField {
  readonly map = dataRecord<number[]>();
  add(field: string, index: number): void {
    const list = (this.map[field] ??= []);
    if (!list.includes(index)) list.push(index);
  }
  get empty(): boolean {
    return Object.keys(this.map).length === 0;
  }
}

const ID_FIELDS = ['user_id', 'device_id'] as const;

/**
 * The 400 body for an upload whose schema validation found `problems` or whose events break
 * the rules the schema cannot express (id length, a revenue that overflows); undefined when valid.
 */
export function uploadProblems(body: unknown, problems: RequestProblem[], rules: EventRules): InvalidUploadError | undefined {
  const invalid = new IndexesByField();
  const missing = new IndexesByField();
  for (const problem of problems) {
    if (problem.where === 'credentials') return { code: 400, error: 'Request missing required field', missing_field: 'api_key' };
    if (problem.where !== 'body' || !problem.errors) return { code: 400, error: `Invalid request: ${problem.message}` };
    for (const error of problem.errors) {
      const [, top, index, field] = error.instancePath.split('/');
      if (top === undefined) {
        if (error.keyword === 'required') {
          return { code: 400, error: 'Request missing required field', missing_field: String(error.params.missingProperty) };
        }
        return { code: 400, error: `Invalid request: ${problem.message}` };
      }
      if (top !== 'events') return { code: 400, error: `Invalid request: ${problem.message}` };
      if (index === undefined) return { code: 400, error: 'Invalid request: events must be a non-empty array' };
      if (field !== undefined) invalid.add(field, Number(index));
      else if (error.keyword === 'required') missing.add(String(error.params.missingProperty), Number(index));
      else if (error.keyword === 'type') invalid.add('event', Number(index));
    }
  }
  const request = body as UploadRequest;
  if (Array.isArray(request?.events)) {
    const minIdLength = request.options?.min_id_length ?? rules.defaultMinIdLength;
    request.events.forEach((event, index) => {
      if (event === null || typeof event !== 'object') return;
      for (const id of ID_FIELDS) {
        const value = event[id];
        if (typeof value === 'string' && value.length < minIdLength) invalid.add(id, index);
      }
      const { price, revenue } = revenueFields(event);
      if (price !== null && !Number.isFinite(revenue)) invalid.add('price', index);
    });
  }
  if (missing.empty && invalid.empty) return undefined;
  const answer: InvalidUploadError = { code: 400, error: missing.empty ? 'Request has events with invalid fields' : 'Request missing required field' };
  if (!invalid.empty) answer.events_with_invalid_fields = invalid.map;
  if (!missing.empty) answer.events_with_missing_fields = missing.map;
  return answer;
}

/**
 * The device_id of an event sent without one: a hash of its user_id. One-shot `hash`, not a
 * `createHash` object per event: those native objects are freed by the GC's weak callbacks,
 * which made the ingestion thread's scavenges long.
 */
export function deviceIdFor(userId: string): string {
  return hash('sha256', userId, 'hex').slice(0, 32);
}

/** Keeps the first `maxGroupTypes` group types and the first `maxGroups` group names in all. */
export function trackedGroups(groups: Record<string, string | string[]> | undefined, rules: EventRules): Record<string, string | string[]> | null {
  if (!groups) return null;
  const tracked = dataRecord<string | string[]>();
  let remaining = rules.maxGroups;
  for (const [groupType, value] of Object.entries(groups).slice(0, rules.maxGroupTypes)) {
    if (remaining === 0) break;
    if (Array.isArray(value)) {
      tracked[groupType] = value.slice(0, remaining);
      remaining -= (tracked[groupType] as string[]).length;
    } else {
      tracked[groupType] = value;
      remaining--;
    }
  }
  return tracked;
}

export interface UploadContext {
  appId: number;
  receivedAt: number;
  remoteAddress: string;
}

/** The stored form of a valid event. */
export function toStoredEvent(event: EventRecord, context: UploadContext, rules: EventRules): StoredEvent {
  const userId = event.user_id ?? null;
  const { price, quantity, revenue, productId, revenueType } = revenueFields(event);
  // One object literal with every field (the compiler checks that none is missing): a
  // single hidden class, which JSON.stringify and the property accesses handle fastest.
  return {
    app_id: context.appId,
    insert_id: event.insert_id ?? null,
    event_type: event.event_type,
    user_id: userId,
    device_id: event.device_id ?? (userId !== null ? deviceIdFor(userId) : null),
    time: event.time ?? context.receivedAt,
    server_upload_time: context.receivedAt,
    session_id: event.session_id ?? null,
    event_id: event.event_id ?? null,
    event_properties: event.event_properties ?? null,
    user_properties: event.user_properties ?? null,
    groups: trackedGroups(event.groups, rules),
    group_properties: event.event_type === '$groupidentify' ? (event.group_properties ?? null) : null,
    skip_user_properties_sync: event.$skip_user_properties_sync ?? false,
    price,
    quantity,
    revenue,
    productId,
    revenueType,
    currency: event.currency ?? null,
    location_lat: event.location_lat ?? null,
    location_lng: event.location_lng ?? null,
    ip: event.ip === '$remote' ? context.remoteAddress : (event.ip ?? null),
    idfa: event.idfa ?? null,
    idfv: event.idfv ?? null,
    adid: event.adid ?? null,
    android_id: event.android_id ?? null,
    android_app_set_id: event.android_app_set_id ?? null,
    plan: event.plan ? Object.fromEntries(Object.entries(event.plan).filter(([k, v]) => ['branch', 'source', 'version'].includes(k) && typeof v === 'string')) : null,
    app_version: event.app_version ?? null,
    platform: event.platform ?? null,
    os_name: event.os_name ?? null,
    os_version: event.os_version ?? null,
    device_brand: event.device_brand ?? null,
    device_manufacturer: event.device_manufacturer ?? null,
    device_model: event.device_model ?? null,
    carrier: event.carrier ?? null,
    country: event.country ?? null,
    region: event.region ?? null,
    city: event.city ?? null,
    dma: event.dma ?? null,
    language: event.language ?? null,
  };
}
