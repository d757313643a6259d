/**
 * Independent test oracle: answers reporting questions by plain TypeScript over the events
 * as uploaded, following src/reporting/SEMANTICS.md. Written for obviousness, not speed.
 */
import type { UploadEvent } from './dataset.js';

const DAY_MS = 86_400_000;
const INACTIVE_EVENTS = new Set(['$identify', '$groupidentify', '[Experiment] Assignment', '[Experiment] Exposure']);
export const NONE = '(none)';

export interface ResolvedEvent {
  event: UploadEvent;
  /** Position in ingestion order. */
  index: number;
  svcId: number;
  active: boolean;
  /** User properties in force at the event (profile then the event's plain user_properties). */
  userProperties: Record<string, unknown>;
  /** The profile in force at the event (after an $identify's own operations). */
  profile: Record<string, unknown>;
  builtIns: Record<string, string | undefined>;
}

/** Resolves svc_ids (joins, merges) in ingestion order and user properties at event time. */
export function resolveEvents(events: readonly UploadEvent[]): ResolvedEvent[] {
  const userSvc = new Map<string, number>();
  const deviceOwner = new Map<string, string>();
  const anonymousDeviceSvc = new Map<string, number>();
  const mergedInto = new Map<number, number>();
  let nextSvc = 1;
  const finalSvc = (svc: number): number => {
    let current = svc;
    while (mergedInto.has(current)) current = mergedInto.get(current)!;
    return current;
  };
  const rawSvc = events.map((event) => {
    const device = event.device_id;
    const anonymousSvc = device !== undefined && !deviceOwner.has(device) ? anonymousDeviceSvc.get(device) : undefined;
    if (event.user_id !== undefined) {
      let svc = userSvc.get(event.user_id);
      if (svc === undefined) {
        svc = anonymousSvc ?? nextSvc++;
        userSvc.set(event.user_id, svc);
      } else if (anonymousSvc !== undefined && finalSvc(anonymousSvc) !== finalSvc(svc)) {
        mergedInto.set(finalSvc(anonymousSvc), finalSvc(svc));
      }
      if (device !== undefined) deviceOwner.set(device, event.user_id);
      return svc;
    }
    if (device === undefined) throw new Error('event without user_id and device_id');
    const owner = deviceOwner.get(device);
    if (owner !== undefined) return userSvc.get(owner)!;
    if (anonymousSvc !== undefined) return anonymousSvc;
    const svc = nextSvc++;
    anonymousDeviceSvc.set(device, svc);
    return svc;
  });

  const profiles = new Map<number, Record<string, unknown>>();
  const resolved: ResolvedEvent[] = events.map((event, index) => {
    const svcId = finalSvc(rawSvc[index]!);
    const profile = profiles.get(svcId) ?? {};
    const ownPlain = Object.fromEntries(Object.entries(event.user_properties ?? {}).filter(([key]) => !key.startsWith('$')));
    // An $identify sees the values it sets: they are in force at its time.
    if (event.event_type === '$identify') profiles.set(svcId, applyIdentify(profile, event.user_properties ?? {}));
    const userProperties = event.event_type === '$identify' ? { ...profiles.get(svcId) } : { ...profile, ...ownPlain };
    return { event, index, svcId, active: !INACTIVE_EVENTS.has(event.event_type), userProperties, profile: profiles.get(svcId) ?? {}, builtIns: {} };
  });
  fillBuiltIns(resolved);
  return resolved;
}

function applyIdentify(profile: Record<string, unknown>, operations: Record<string, unknown>): Record<string, unknown> {
  const next = { ...profile };
  const entries = (operation: string) => Object.entries((operations[operation] ?? {}) as Record<string, unknown>);
  for (const [key, value] of entries('$set')) next[key] = value;
  for (const [key, value] of entries('$setOnce')) if (!(key in next)) next[key] = value;
  for (const [key, value] of entries('$add')) next[key] = (Number(next[key]) || 0) + Number(value);
  for (const [key, value] of entries('$append')) {
    const current = next[key];
    const list = current === undefined ? [] : Array.isArray(current) ? current : [current];
    next[key] = [...list, ...(Array.isArray(value) ? value : [value])];
  }
  for (const [key] of entries('$unset')) delete next[key];
  for (const [key, value] of Object.entries(operations)) if (!key.startsWith('$')) next[key] = value;
  return next;
}

/** A profile value as reporting reads it: strings as they are, null as missing, other JSON as its text. */
const profileText = (value: unknown) => (value === undefined || value === null ? undefined : typeof value === 'string' ? value : JSON.stringify(value));

/**
 * start_version and paying follow ingestion order, as the profile does (see SEMANTICS.md); set
 * in the profile (the Identify API's fields), they win.
 */
function fillBuiltIns(resolved: ResolvedEvent[]): void {
  const byUser = groupBy(resolved, (r) => r.svcId);
  for (const userEvents of byUser.values()) {
    // In ingestion order already (groupBy keeps it).
    const startVersion = userEvents.find((r) => r.event.app_version !== undefined)?.event.app_version;
    const firstRevenueIndex = userEvents.find((r) => r.event.revenue !== undefined && r.event.revenue !== null)?.index;
    for (const r of userEvents) {
      const e = r.event;
      const os = [e.os_name, e.os_version].filter((part) => part !== undefined).join(' ');
      const deviceType = [e.device_brand, e.device_model].filter((part) => part !== undefined).join(' ');
      r.builtIns = {
        version: e.app_version, country: e.country, city: e.city, region: e.region, DMA: e.dma,
        language: e.language, platform: e.platform, os: os === '' || e.os_name === undefined ? undefined : os,
        device: e.device_model, device_type: deviceType === '' ? undefined : deviceType,
        start_version: profileText(r.profile.start_version) ?? startVersion,
        paying: profileText(r.profile.paying) ?? String(firstRevenueIndex !== undefined && firstRevenueIndex <= r.index),
      };
    }
  }
}

export function byTime(a: ResolvedEvent, b: ResolvedEvent): number {
  return a.event.time - b.event.time || a.index - b.index;
}

export function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

// ---------- time ----------

const formatters = new Map<string, Intl.DateTimeFormat>();
/** Local wall-clock parts of an instant in an IANA zone. */
export function localParts(ms: number, timeZone: string): { date: string; hour: string; minute: string } {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
    });
    formatters.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(ms).map((p) => [p.type, p.value]));
  return { date: `${parts.year}-${parts.month}-${parts.day}`, hour: parts.hour!, minute: parts.minute! };
}

export type Interval = 'realtime' | 'hourly' | 'daily' | 'weekly' | 'monthly';

/** Bucket label of an instant: local day / Monday / first of month / hour / 5 minutes. */
export function bucketOf(ms: number, timeZone: string, interval: Interval): string {
  const { date, hour, minute } = localParts(ms, timeZone);
  switch (interval) {
    case 'daily': return date;
    case 'weekly': return mondayOf(date);
    case 'monthly': return `${date.slice(0, 8)}01`;
    case 'hourly': return `${date}T${hour}:00:00`;
    case 'realtime': return `${date}T${hour}:${String(Math.floor(Number(minute) / 5) * 5).padStart(2, '0')}:00`;
  }
}

function mondayOf(date: string): string {
  const utc = Date.parse(`${date}T00:00:00Z`);
  const weekday = (new Date(utc).getUTCDay() + 6) % 7;
  return new Date(utc - weekday * DAY_MS).toISOString().slice(0, 10);
}

/** `YYYYMMDD` → `YYYY-MM-DD`. */
export function isoDate(yyyymmdd: string): string {
  return `${yyyymmdd.slice(0, 4)}-${yyyymmdd.slice(4, 6)}-${yyyymmdd.slice(6, 8)}`;
}

export interface Range { start: string; end: string; timeZone: string }

export function inRange(ms: number, range: Range): boolean {
  const date = localParts(ms, range.timeZone).date;
  return date >= isoDate(range.start) && date <= isoDate(range.end);
}

/**
 * Bucket labels of the range in order. Hours and 5 minutes: every wall-clock one of each local
 * day (the hour skipped when clocks go forward too, the repeated one once); the others by
 * walking the instants (DST-proof).
 */
export function xValuesOf(range: Range, interval: Interval): string[] {
  const from = Date.parse(`${isoDate(range.start)}T00:00:00Z`);
  const to = Date.parse(`${isoDate(range.end)}T00:00:00Z`);
  if (interval === 'hourly' || interval === 'realtime') {
    const labels: string[] = [];
    const step = interval === 'hourly' ? 60 : 5;
    const pad = (n: number) => String(n).padStart(2, '0');
    for (let day = from; day <= to; day += DAY_MS) {
      for (let minute = 0; minute < 24 * 60; minute += step) labels.push(`${new Date(day).toISOString().slice(0, 10)}T${pad(Math.floor(minute / 60))}:${pad(minute % 60)}:00`);
    }
    return labels;
  }
  const labels = new Set<string>();
  for (let ms = from - DAY_MS; ms < to + 2 * DAY_MS; ms += 3_600_000) if (inRange(ms, range)) labels.add(bucketOf(ms, range.timeZone, interval));
  return [...labels];
}

export function intervalOfDays(i: 1 | 7 | 30): Interval {
  return i === 1 ? 'daily' : i === 7 ? 'weekly' : 'monthly';
}

// ---------- properties, filters, segments ----------

export interface PropertyRef { type: 'event' | 'user'; key: string }

/** Values of a property at an event as strings; `(none)` when missing; arrays give each element. */
export function propertyValues(r: ResolvedEvent, property: PropertyRef): string[] {
  let value: unknown;
  if (property.type === 'event') value = r.event.event_properties?.[property.key];
  else if (property.key.startsWith('gp:')) value = r.userProperties[property.key.slice(3)];
  else value = r.builtIns[property.key];
  if (value === undefined || value === null) return [NONE];
  const list = Array.isArray(value) ? value : [value];
  return list.length === 0 ? [NONE] : list.map(asString);
}

function asString(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export type Operator =
  | 'is' | 'is not' | 'contains' | 'does not contain' | 'less' | 'less or equal'
  | 'greater' | 'greater or equal' | 'set is' | 'set is not';

export function matches(values: string[], op: Operator, wanted: string[]): boolean {
  const numeric = (compare: (a: number, b: number) => boolean) =>
    values.some((v) => v !== NONE && v.trim() !== '' && !Number.isNaN(Number(v)) && compare(Number(v), Number(wanted[0])));
  switch (op) {
    case 'is': return values.some((v) => wanted.includes(v));
    case 'is not': return !values.some((v) => wanted.includes(v));
    case 'contains': return values.some((v) => v !== NONE && wanted.some((w) => v.includes(w)));
    case 'does not contain': return !values.some((v) => v !== NONE && wanted.some((w) => v.includes(w)));
    case 'less': return numeric((a, b) => a < b);
    case 'less or equal': return numeric((a, b) => a <= b);
    case 'greater': return numeric((a, b) => a > b);
    case 'greater or equal': return numeric((a, b) => a >= b);
    case 'set is': return sameSet(values, wanted);
    case 'set is not': return !sameSet(values, wanted);
  }
}

/** Whether a property's values (a missing one: none) and the wanted ones are the same set. */
function sameSet(values: string[], wanted: string[]): boolean {
  const have = new Set(values.filter((v) => v !== NONE));
  const want = new Set(wanted);
  return have.size === want.size && [...want].every((w) => have.has(w));
}

export interface Filter { subprop_type: 'event' | 'user'; subprop_key: string; subprop_op: Operator; subprop_value: string[] }
export interface Segment { prop: string; op: Operator; values: string[] }

function userRef(prop: string): PropertyRef {
  return { type: 'user', key: prop };
}

export function passesSegment(r: ResolvedEvent, segment: readonly Segment[] | undefined): boolean {
  return (segment ?? []).every((condition) => matches(propertyValues(r, userRef(condition.prop)), condition.op, condition.values));
}

// ---------- operations ----------

export interface Oracle { events: ResolvedEvent[]; timeZone: string }

/** `/usermap`: `userId`'s events count as `globalUserId`'s user. */
export interface UserMapping { userId: string; globalUserId: string }

export function createOracle(uploads: readonly UploadEvent[], timeZone = 'UTC', mappings: readonly UserMapping[] = []): Oracle {
  const events = resolveEvents(uploads);
  const svcOf = (userId: string) => events.find((r) => r.event.user_id === userId)?.svcId;
  const mappedInto = new Map(mappings.map(({ userId, globalUserId }) => [svcOf(userId), svcOf(globalUserId)]));
  // After the properties are resolved: a mapped user's properties stay its own.
  for (const r of events) r.svcId = mappedInto.get(r.svcId) ?? r.svcId;
  return { events, timeZone };
}

function rangeOf(oracle: Oracle, params: { start: string; end: string }): Range {
  return { start: params.start, end: params.end, timeZone: oracle.timeZone };
}

export interface UsersParams { start: string; end: string; m: 'active' | 'new'; i: 1 | 7 | 30; s?: Segment[]; g?: string }

export function users(oracle: Oracle, params: UsersParams) {
  const range = rangeOf(oracle, params);
  const interval = intervalOfDays(params.i);
  const xValues = xValuesOf(range, interval);
  const firstEventTime = new Map<number, number>();
  for (const r of oracle.events) firstEventTime.set(r.svcId, Math.min(firstEventTime.get(r.svcId) ?? Infinity, r.event.time));
  // new: the user's first event ever (active or not), when it is in the range
  const counted = oracle.events.filter((r) =>
    inRange(r.event.time, range) && passesSegment(r, params.s) && (params.m === 'active' ? r.active : r.event.time === firstEventTime.get(r.svcId)));
  const groupOf = (r: ResolvedEvent) => (params.g === undefined ? ['0'] : propertyValues(r, userRef(params.g)));
  const rows = new Map<string, { perBucket: Map<string, Set<number>>; all: Set<number> }>();
  for (const r of counted) {
    for (const group of groupOf(r)) {
      const row = rows.get(group) ?? { perBucket: new Map(), all: new Set() };
      rows.set(group, row);
      const bucket = bucketOf(r.event.time, range.timeZone, interval);
      row.perBucket.set(bucket, (row.perBucket.get(bucket) ?? new Set()).add(r.svcId));
      row.all.add(r.svcId);
    }
  }
  if (params.g === undefined && rows.size === 0) rows.set('0', { perBucket: new Map(), all: new Set() });
  const ordered = [...rows.entries()].sort(([a, x], [b, y]) => y.all.size - x.all.size || compareText(a, b));
  return {
    xValues,
    series: ordered.map(([, row]) => xValues.map((x) => row.perBucket.get(x)?.size ?? 0)),
    seriesCollapsed: ordered.map(([, row]) => [row.all.size]),
    seriesLabels: ordered.map(([label]) => (params.g === undefined ? 0 : label)),
    seriesMeta: ordered.map(() => ({ segmentIndex: 0 })),
  };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface Session { svcId: number; start: number; lengthMs: number }

/** Sessions started in range with at least one active event; length over all their events. */
export function sessionsInRange(oracle: Oracle, range: Range): Session[] {
  const withId = oracle.events.filter((r) => r.event.session_id !== undefined && r.event.session_id !== null && r.event.session_id !== -1);
  const sessions = groupBy(withId, (r) => `${r.svcId}/${r.event.session_id}`);
  const result: Session[] = [];
  for (const members of sessions.values()) {
    const start = members[0]!.event.session_id!;
    if (!members.some((r) => r.active) || !inRange(start, range)) continue;
    const last = Math.max(...members.map((r) => r.event.time));
    result.push({ svcId: members[0]!.svcId, start, lengthMs: Math.min(Math.max(last - start, 0), DAY_MS) });
  }
  return result;
}

export const DEFAULT_SESSION_BINS_MS = [0, 3_000, 10_000, 30_000, 60_000, 180_000, 600_000, 1_800_000, 3_600_000, 86_400_000];
const UNIT_MS = { seconds: 1_000, minutes: 60_000, hours: 3_600_000 } as const;

export interface SessionLengthParams { start: string; end: string; timeHistogramConfigBinMin?: number; timeHistogramConfigBinMax?: number; timeHistogramConfigBinSize?: number; timeHistogramConfigBinTimeUnit?: keyof typeof UNIT_MS }

export function sessionLength(oracle: Oracle, params: SessionLengthParams) {
  let edges = DEFAULT_SESSION_BINS_MS;
  if (params.timeHistogramConfigBinMin !== undefined && params.timeHistogramConfigBinMax !== undefined) {
    const unit = UNIT_MS[params.timeHistogramConfigBinTimeUnit ?? 'seconds'];
    const size = params.timeHistogramConfigBinSize ?? params.timeHistogramConfigBinMax - params.timeHistogramConfigBinMin;
    edges = [];
    for (let edge = params.timeHistogramConfigBinMin; edge < params.timeHistogramConfigBinMax; edge += size) edges.push(edge * unit);
    edges.push(params.timeHistogramConfigBinMax * unit);
  }
  const sessions = sessionsInRange(oracle, rangeOf(oracle, params));
  // [start, end); lengths are capped at a day, which a bin ending there holds.
  const counts = edges.slice(1).map((upper, k) =>
    sessions.filter((s) => s.lengthMs >= edges[k]! && (s.lengthMs < upper || (upper === DAY_MS && s.lengthMs === upper))).length);
  return {
    series: [counts],
    xValues: edges.slice(1).map((upper, k) => `${edges[k]! / 1000}s-${upper / 1000}s`),
  };
}

/** `value` of the sessions of some days (`days`); per day, then over the whole range. */
function perDaySessions(oracle: Oracle, params: { start: string; end: string }, value: (sessions: Session[], days: string[]) => number) {
  const range = rangeOf(oracle, params);
  const xValues = xValuesOf(range, 'daily');
  const sessions = sessionsInRange(oracle, range);
  const byDay = groupBy(sessions, (s) => bucketOf(s.start, range.timeZone, 'daily'));
  return {
    series: [xValues.map((day) => value(byDay.get(day) ?? [], [day]))],
    seriesCollapsed: [[value(sessions, xValues)]],
    seriesLabels: [0],
    seriesMeta: [{ segmentIndex: 0 }],
    xValues,
  };
}

export function sessionAverage(oracle: Oracle, params: { start: string; end: string }) {
  return perDaySessions(oracle, params, (sessions) =>
    sessions.length === 0 ? 0 : sessions.reduce((sum, s) => sum + s.lengthMs, 0) / sessions.length / 1000);
}

export function sessionsPerUser(oracle: Oracle, params: { start: string; end: string }) {
  const range = rangeOf(oracle, params);
  const activeByDay = groupBy(oracle.events.filter((r) => r.active), (r) => bucketOf(r.event.time, range.timeZone, 'daily'));
  return perDaySessions(oracle, params, (sessions, days) => {
    const active = new Set(days.flatMap((day) => activeByDay.get(day) ?? []).map((r) => r.svcId));
    return active.size === 0 ? 0 : sessions.length / active.size;
  });
}

export function composition(oracle: Oracle, params: { start: string; end: string; p: string }) {
  const range = rangeOf(oracle, params);
  const latest = new Map<number, ResolvedEvent>();
  for (const r of oracle.events) {
    if (!r.active || !inRange(r.event.time, range)) continue;
    const current = latest.get(r.svcId);
    if (!current || byTime(current, r) < 0) latest.set(r.svcId, r);
  }
  const counts = new Map<string, number>();
  for (const r of latest.values()) for (const value of new Set(propertyValues(r, userRef(params.p)))) counts.set(value, (counts.get(value) ?? 0) + 1);
  const ordered = [...counts.entries()].sort(([a, x], [b, y]) => y - x || compareText(a, b));
  return { series: [ordered.map(([, n]) => n)], seriesLabels: [params.p], xValues: ordered.map(([value]) => value) };
}

export function eventsList(oracle: Oracle, now: number) {
  const week = bucketOf(now, oracle.timeZone, 'weekly');
  const types = [...new Set(oracle.events.map((r) => r.event.event_type))];
  return types.map((type) => ({
    value: type,
    display: type,
    totals: oracle.events.filter((r) => r.event.event_type === type && r.event.time <= now && bucketOf(r.event.time, oracle.timeZone, 'weekly') === week).length,
    non_active: INACTIVE_EVENTS.has(type),
    deleted: false,
    hidden: false,
    flow_hidden: false,
  }));
}

// ---------- segmentation ----------

export interface GroupBy { type: 'event' | 'user'; value: string }
export interface EventSpec { event_type: string; filters?: Filter[]; group_by?: GroupBy[] }
export type SegmentationMetric = 'uniques' | 'totals' | 'pct_dau' | 'average' | 'sums' | 'value_avg' | 'formula';
type ValueMetric = Exclude<SegmentationMetric, 'formula'> | 'min' | 'max';
export type SegmentationInterval = -300000 | -3600000 | 1 | 7 | 30;

export interface SegmentationParams {
  start: string;
  end: string;
  e: EventSpec;
  e2?: EventSpec;
  m?: SegmentationMetric;
  n?: 'any' | 'active';
  i?: SegmentationInterval;
  s?: Segment[];
  limit?: number;
  rollingWindow?: number;
  rollingAverage?: number;
  /** With m=formula, e.g. `UNIQUES(A) / UNIQUES(B)`. */
  formula?: string;
}

function segmentationInterval(i: SegmentationInterval): Interval {
  return i === -300000 ? 'realtime' : i === -3600000 ? 'hourly' : intervalOfDays(i);
}

export function matchesEventSpec(r: ResolvedEvent, spec: EventSpec): boolean {
  const typeMatches =
    spec.event_type === '_all' ? true
    : spec.event_type === '_active' ? r.active
    : spec.event_type === 'revenue_amount' ? typeof r.event.revenue === 'number'
    : r.event.event_type === spec.event_type;
  return typeMatches && (spec.filters ?? []).every((f) =>
    matches(propertyValues(r, { type: f.subprop_type, key: f.subprop_key }), f.subprop_op, f.subprop_value));
}

/** The numeric value summed by sums/value_avg: the first group-by property, or revenue for revenue_amount. */
function numericValue(r: ResolvedEvent, spec: EventSpec): number | undefined {
  const first = spec.group_by?.[0];
  const raw = first ? r.event.event_properties?.[first.value] ?? (first.type === 'user' ? r.userProperties[first.value] : undefined)
    : spec.event_type === 'revenue_amount' ? r.event.revenue : undefined;
  const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function metricOf(metric: ValueMetric, events: ResolvedEvent[], activeUsers: Set<number>, spec: EventSpec): number {
  const uniques = new Set(events.map((r) => r.svcId)).size;
  const numbers = events.map((r) => numericValue(r, spec)).filter((v): v is number => v !== undefined);
  const sum = numbers.reduce((total, v) => total + v, 0);
  switch (metric) {
    case 'uniques': return uniques;
    case 'totals': return events.length;
    case 'pct_dau': return activeUsers.size === 0 ? 0 : uniques / activeUsers.size;
    case 'average': return uniques === 0 ? 0 : events.length / uniques;
    case 'sums': return sum;
    case 'value_avg': return numbers.length === 0 ? 0 : sum / numbers.length;
    case 'min': return numbers.length === 0 ? 0 : Math.min(...numbers);
    case 'max': return numbers.length === 0 ? 0 : Math.max(...numbers);
  }
}

/** Range widened back so rolling points at `start` see their full window. */
function widenedStart(start: string, interval: Interval, buckets: number): string {
  const date = new Date(`${isoDate(start)}T00:00:00Z`);
  if (interval === 'monthly') date.setUTCMonth(date.getUTCMonth() - buckets);
  else date.setUTCDate(date.getUTCDate() - (interval === 'weekly' ? 7 : 1) * buckets);
  return date.toISOString().slice(0, 10).replaceAll('-', '');
}

const FORMULA_FUNCTIONS: Record<string, ValueMetric> = {
  UNIQUES: 'uniques', TOTALS: 'totals', AVG: 'average', ACTIVE: 'pct_dau',
  PROPSUM: 'sums', PROPAVG: 'value_avg', PROPMIN: 'min', PROPMAX: 'max',
};

/** Recursive descent over + − × ÷ and parentheses; a division by zero gives 0. */
export function evaluateFormula(formula: string, call: (metric: ValueMetric, eventIndex: number) => number): number {
  const tokens = formula.match(/[A-Z]+\([A-Z]\)|\d+(?:\.\d+)?|[-+*/()]/g) ?? [];
  let position = 0;
  const next = () => tokens[position++];
  const primary = (): number => {
    const token = next();
    if (token === '(') { const value = sum(); next(); return value; }
    if (token === '-') return -primary();
    const callMatch = token?.match(/^([A-Z]+)\(([A-Z])\)$/);
    if (callMatch) {
      const metric = FORMULA_FUNCTIONS[callMatch[1]!];
      if (!metric) throw new Error(`unknown formula function ${callMatch[1]}`);
      return call(metric, callMatch[2]!.charCodeAt(0) - 65);
    }
    return Number(token);
  };
  const product = (): number => {
    let value = primary();
    while (tokens[position] === '*' || tokens[position] === '/') {
      const operator = next();
      const right = primary();
      value = operator === '*' ? value * right : right === 0 ? 0 : value / right;
    }
    return value;
  };
  const sum = (): number => {
    let value = product();
    while (tokens[position] === '+' || tokens[position] === '-') value = next() === '+' ? value + product() : value - product();
    return value;
  };
  return sum();
}

export function segmentation(oracle: Oracle, params: SegmentationParams) {
  const metric = params.m ?? 'uniques';
  const interval = segmentationInterval(params.i ?? 1);
  const range = rangeOf(oracle, params);
  const xValues = xValuesOf(range, interval);
  const back = Math.max(params.rollingWindow ?? 1, params.rollingAverage ?? 1) - 1;
  const wide: Range = { ...range, start: widenedStart(params.start, interval, back) };
  const allBuckets = xValuesOf(wide, interval);
  const bucket = (r: ResolvedEvent) => bucketOf(r.event.time, range.timeZone, interval);
  const usable = oracle.events.filter((r) => inRange(r.event.time, wide) && passesSegment(r, params.s));
  const activeByBucket = groupBy(usable.filter((r) => r.active), bucket);
  const activeUsers = new Map<string, Set<number>>();
  const activeUsersIn = (buckets: string[]) => {
    const key = buckets.join(',');
    let users = activeUsers.get(key);
    if (!users) activeUsers.set(key, (users = new Set(buckets.flatMap((b) => activeByBucket.get(b) ?? []).map((r) => r.svcId))));
    return users;
  };
  const windowOf = (x: string, size: number) => allBuckets.slice(Math.max(0, allBuckets.indexOf(x) - size + 1), allBuckets.indexOf(x) + 1);

  const specs = [params.e, ...(params.e2 ? [params.e2] : [])];
  const eventsOf = (spec: EventSpec) => {
    const events = usable.filter((r) => matchesEventSpec(r, spec));
    return params.n === 'active' ? events.filter((r) => activeUsersIn([bucket(r)]).has(r.svcId)) : events;
  };
  const rollingPoints = (point: (window: string[]) => number) => xValues.map((x) => {
    if (!params.rollingAverage) return point(windowOf(x, params.rollingWindow ?? 1));
    const window = windowOf(x, params.rollingAverage);
    return window.reduce((sum, b) => sum + point(windowOf(b, params.rollingWindow ?? 1)), 0) / window.length;
  });
  if (metric === 'formula') {
    const byBucket = specs.map((spec) => groupBy(eventsOf(spec), bucket));
    const evaluate = (window: string[]) => evaluateFormula(params.formula ?? '', (valueMetric, eventIndex) =>
      metricOf(valueMetric, window.flatMap((b) => byBucket[eventIndex]?.get(b) ?? []), activeUsersIn(window), specs[eventIndex]!));
    return {
      series: [rollingPoints(evaluate)],
      seriesLabels: [0],
      seriesCollapsed: [[{ setId: '', value: evaluate(xValues) }]],
      seriesMeta: [{ segmentIndex: 0, formulaIndex: 0, formula: params.formula ?? '' }],
      xValues,
    };
  }
  const rows: { label: number | (number | string)[]; eventIndex: number; series: number[]; collapsed: number }[] = [];
  specs.forEach((spec, eventIndex) => {
    const events = eventsOf(spec);
    // sums and value_avg measure the first group-by property: one series per event.
    const groupings = metric === 'sums' || metric === 'value_avg' ? [] : (spec.group_by ?? []).slice(0, 2);
    const groups = new Map<string, { label: number | (number | string)[]; events: ResolvedEvent[] }>();
    for (const r of events) {
      const combos = groupings.reduce<string[][]>((acc, g) => acc.flatMap((c) => propertyValues(r, { type: g.type, key: g.value }).map((v) => [...c, v])), [[]]);
      for (const combo of combos) {
        const key = JSON.stringify(combo);
        // The segment index alone for one event without group-by, else [segment, (event type with e2,) values…].
        const label = combo.length === 0 && !params.e2 ? 0 : [0, ...(params.e2 ? [spec.event_type] : []), ...combo];
        const group = groups.get(key) ?? { label, events: [] };
        groups.set(key, group);
        group.events.push(r);
      }
    }
    if (groups.size === 0 && groupings.length === 0) groups.set('[]', { label: params.e2 ? [0, spec.event_type] : 0, events: [] });
    const inRangeUniques = (g: { events: ResolvedEvent[] }) => new Set(g.events.filter((r) => inRange(r.event.time, range)).map((r) => r.svcId)).size;
    const kept = [...groups.entries()]
      .sort(([a, x], [b, y]) => inRangeUniques(y) - inRangeUniques(x) || compareText(a, b))
      .slice(0, params.limit ?? 100);
    for (const [, group] of kept) {
      const byBucket = groupBy(group.events, bucket);
      const series = rollingPoints((window) =>
        metricOf(metric, window.flatMap((b) => byBucket.get(b) ?? []), activeUsersIn(window), spec));
      const inRangeEvents = group.events.filter((r) => inRange(r.event.time, range));
      rows.push({ label: group.label, eventIndex, series, collapsed: metricOf(metric, inRangeEvents, activeUsersIn(xValues), spec) });
    }
  });
  return {
    series: rows.map((row) => row.series),
    seriesLabels: rows.map((row) => row.label),
    seriesCollapsed: rows.map((row) => [{ setId: '', value: row.collapsed }]),
    seriesMeta: rows.map((row) => ({ segmentIndex: 0, eventIndex: row.eventIndex })),
    xValues,
  };
}

// ---------- funnels ----------

export interface FunnelParams {
  start: string;
  end: string;
  e: EventSpec[];
  mode?: 'ordered' | 'unordered' | 'sequential';
  /** Conversion window in seconds; default 30 days. */
  cs?: number;
  s?: Segment[];
  g?: string;
  limit?: number;
}

interface FunnelPath { entry: ResolvedEvent; stepTimes: number[] }
/** A user's winning path, and the best path of each day the user entered on. */
interface UserFunnel { best: FunnelPath; bestByDay: Map<string, FunnelPath> }

/** Steps reached from one entry: the times of steps 0..k. */
function followEntry(userEvents: ResolvedEvent[], entryPosition: number, steps: EventSpec[], mode: FunnelParams['mode'], windowMs: number): number[] {
  const entry = userEvents[entryPosition]!;
  const times = [entry.event.time];
  const deadline = entry.event.time + windowMs;
  const later = userEvents.slice(entryPosition + 1).filter((r) => r.event.time <= deadline);
  if (mode === 'unordered') {
    const used = new Set<ResolvedEvent>([entry]);
    for (const step of steps.slice(1)) {
      const found = later.find((r) => !used.has(r) && matchesEventSpec(r, step));
      if (!found) break;
      used.add(found);
      times.push(found.event.time);
    }
    return times;
  }
  for (const r of later) {
    if (times.length === steps.length) break;
    if (matchesEventSpec(r, steps[times.length]!)) times.push(r.event.time);
    else if (mode === 'sequential') break;
  }
  return times;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : Math.round((sorted[middle - 1]! + sorted[middle]!) / 2);
}

function mean(values: number[]): number {
  return values.length === 0 ? 0 : Math.round(values.reduce((sum, v) => sum + v, 0) / values.length);
}

export function funnels(oracle: Oracle, params: FunnelParams) {
  const steps = params.e;
  const mode = params.mode ?? 'ordered';
  const csSeconds = params.cs ?? 30 * 86_400;
  const windowMs = mode === 'unordered' ? Math.floor(csSeconds / 86_400) * DAY_MS : csSeconds * 1000;
  const range = rangeOf(oracle, params);
  const stepIndexAt = (r: ResolvedEvent) => { const k = steps.findIndex((s) => matchesEventSpec(r, s)); return k === -1 ? steps.length : k; };
  const byUser = groupBy(oracle.events.filter((r) => passesSegment(r, params.s)), (r) => r.svcId);
  const entryDay = (p: FunnelPath) => bucketOf(p.entry.event.time, range.timeZone, 'daily');
  const better = (current: FunnelPath | undefined, candidate: FunnelPath) => (!current || candidate.stepTimes.length > current.stepTimes.length ? candidate : current);
  const userFunnels: UserFunnel[] = [];
  for (const userEvents of byUser.values()) {
    const ordered = [...userEvents].sort((a, b) => a.event.time - b.event.time || stepIndexAt(a) - stepIndexAt(b) || a.index - b.index);
    let best: FunnelPath | undefined;
    const bestByDay = new Map<string, FunnelPath>();
    ordered.forEach((r, position) => {
      if (!inRange(r.event.time, range) || !matchesEventSpec(r, steps[0]!)) return;
      const path = { entry: r, stepTimes: followEntry(ordered, position, steps, mode, windowMs) };
      best = better(best, path);
      bestByDay.set(entryDay(path), better(bestByDay.get(entryDay(path)), path));
    });
    if (best) userFunnels.push({ best, bestByDay });
  }
  const groups = groupBy(userFunnels.flatMap((user) =>
    (params.g === undefined ? [''] : propertyValues(user.best.entry, userRef(params.g))).map((groupValue) => ({ groupValue, user }))), (x) => x.groupValue);
  const days = xValuesOf(range, 'daily');
  return [...groups.entries()]
    .sort(([a, x], [b, y]) => y.length - x.length || compareText(a, b))
    .slice(0, params.limit ?? 100)
    .map(([groupValue, members]) => {
      const groupPaths = members.map((m) => m.user.best);
      const reached = (k: number, list = groupPaths) => list.filter((p) => p.stepTimes.length > k);
      const cumulativeRaw = steps.map((_, k) => reached(k).length);
      const transitions = (k: number) => reached(k).map((p) => p.stepTimes[k]! - p.stepTimes[k - 1]!);
      const whole = reached(steps.length - 1).map((p) => p.stepTimes[steps.length - 1]! - p.stepTimes[0]!);
      const stepDurations = steps.map((_, k) => (k === 0 ? whole : transitions(k)));
      return {
        events: steps.map((s) => s.event_type),
        groupValue,
        meta: { segmentIndex: 0 },
        cumulativeRaw,
        cumulative: cumulativeRaw.map((n) => (cumulativeRaw[0] === 0 ? 0 : n / cumulativeRaw[0]!)),
        stepByStep: cumulativeRaw.map((n, k) => (k === 0 ? (n === 0 ? 0 : 1) : cumulativeRaw[k - 1] === 0 ? 0 : n / cumulativeRaw[k - 1]!)),
        medianTransTimes: stepDurations.map(median),
        avgTransTimes: stepDurations.map(mean),
        dayFunnels: {
          xValues: days,
          // A user counts on every day they entered, with that day's best path.
          series: days.map((day) => steps.map((_, k) => reached(k, members.flatMap((m) => m.user.bestByDay.get(day) ?? [])).length)),
        },
      };
    });
}
