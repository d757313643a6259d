// Prints the reporting query model as SQL for ClickHouse 18.16 (Debian's package, the oldest
// server the ClickHouse engine runs on): no JSON functions but visitParam*, no common table
// expressions, no ASOF JOIN, no 128-bit integers, no Map, no parameter binding.
//
// Properties (event properties, the event's user properties, profile versions) are read from
// their top-level keys and the JSON texts of their values, split at insert into two
// Array(String) columns (store/clickhouse/tables.ts): `values[indexOf(keys, name)]`, '' when
// missing. visitParam on the whole JSON text would find a key at any depth (with
// `{"a":{"b":1},"b":2}`, `b` would read 1). A string value's text is unescaped by
// visitParamExtractString on `{"k":<text>}`: it unescapes `\uXXXX` of the basic plane only
// (surrogate pairs come out as CESU-8) and returns '' when unescaping fails; JSON.stringify
// writes characters beyond ASCII unescaped, so only lone surrogates are affected.
// - `set is` / `set is not` split an array's JSON text into its elements by a regular
//   expression (no JSON arrays on 18.16): arrays of strings, numbers, booleans and nulls. An
//   array holding arrays or objects stops the query with an error (throwIf), never a wrong answer.
// Buckets are local wall times from the zone's offsets as DuckDB's (`localWallMs`), held in
// DateTime in UTC; DateTime is seconds since 1970 in 32 bits, so instants before 1970 or after
// 2106 do not bucket correctly.
// The user's state at event time, without window functions or ASOF JOIN: one join (`h`) of a
// row per user: `start_version` (the first version seen) and the `ingest_seq` of the first
// revenue event (`paying` from then on), both kept at load (`user_summaries`), and the profile
// versions as two sorted arrays, the event's version being the last at or before its
// `ingest_seq` (custom `gp:` properties; the event's own user properties win, as on DuckDB).
// Cohort conditions read the engine's `cohort_members`; user mappings its `user_mappings`
// mirror, as one constant pair of arrays given to `transform` (a scalar subquery).
// Ordered and sequential funnels walk each user's event lists with array functions.
import { type CohortCondition, type Condition, type EventScan, type EventSelector, INACTIVE_EVENT_TYPES, plainEventType, type PropertyRef } from '../../model/query.js';
import { type Aggregate, aggregatedValue, type ChainedFunnel, type Dialect, localWallMs, type PerBucketAndWhole, type RollingWindows } from '../dialect.js';
import { type ConditionPrimitives, conditionSql } from '../dialect-conditions.js';
import type { Interval } from '../../model/time.js';
import { currentCohortMembers, currentUserMappings, currentUserSummaries, NEVER_PAID } from './tables.js';

/** The smallest positive double at full precision. */
const MIN_NORMAL = 2.2250738585072014e-308;
/** A ClickHouse string literal (backslashes are escapes in ClickHouse literals). */
const string = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
/** Each aggregate's function, whose -State and -Merge forms split it per bucket and merge it over the range. */
const AGGREGATE_FUNCTIONS: Record<Aggregate['kind'], string> = { count: 'count', distinct: 'uniqExact', sum: 'sum', min: 'min', max: 'max' };

/** `concat_ws(' ', a, b)` (NULLs skipped), empty as NULL: 18.16 has no concat_ws. */
const joined = (a: string, b: string) => `nullIf(concat(ifNull(${a}, ''), if(${a} IS NOT NULL AND ${b} IS NOT NULL, ' ', ''), ifNull(${b}, '')), '')`;

/** The columns of the built-in user properties the events hold (as DuckDbDialect reads them). */
const BUILT_IN_COLUMNS: Record<string, string> = {
  ...Object.fromEntries(['country', 'city', 'region', 'language', 'platform'].map((name) => [name, `e.${name}`])),
  version: 'e.app_version',
  DMA: 'e.dma',
  device: 'e.device_model',
  os: joined('e.os_name', 'e.os_version'),
  device_type: joined('e.device_brand', 'e.device_model'),
};

const ACTIVE = `e.event_type NOT IN (${INACTIVE_EVENT_TYPES.map(string).join(', ')})`;
/** Selector event types that are not event types: every event (no condition), active events, revenue events. */
const SPECIAL_EVENT_TYPES = new Map([
  ['_all', ''],
  ['_active', ACTIVE],
  ['revenue_amount', 'e.revenue IS NOT NULL'],
]);

/** Built-ins that need the user's history before the event and profile (the `h` relation). */
const HISTORY = new Set(['start_version', 'paying']);

/**
 * The JSON text of the key (a literal) in the event's profile version: the last at or before it
 * (index 0, none: empty arrays); '' when missing. 18.16 drops from a subquery the columns only
 * a lambda reads: `0 * e.ingest_seq` names it outside.
 */
function profileValue(key: string): string {
  const version = `arrayCount(s -> s <= e.ingest_seq, h.seqs) + 0 * e.ingest_seq`;
  return `h.version_values[${version}][indexOf(h.version_keys[${version}], ${key})]`;
}
/** The text of a JSON value's text (as DuckDB reads it): strings unescaped, null and missing ('') as NULL. */
const textOf = (raw: string) =>
  `multiIf(${raw} = '' OR ${raw} = 'null', NULL, substring(${raw}, 1, 1) = '"', visitParamExtractString(concat('{"k":', ${raw}, '}'), 'k'), ${raw})`;
/** The elements of a JSON array's text whose elements are strings, numbers, booleans or nulls (JSON.stringify's: no spaces). */
const SCALAR = '"(?:[^"\\\\]|\\\\.)*"|[^,\\[\\]{}"]+';
const FLAT_ARRAY = `^\\[(?:(?:${SCALAR})(?:,(?:${SCALAR}))*)?\\]$`;

/** The columns of every scan, before its bucket, properties and flags. */
const SCAN_COLUMNS = ['svc_id', 'time', 'ingest_seq', 'event_type', 'session_id', 'active'];

/**
 * What a failed query refused, when the failure is the dialect's own check (throwIf, code 395):
 * 18.16's errors carry no type the client parses, so the code is read from the message.
 */
export function refusalOf(error: unknown): string | undefined {
  if (error instanceof Error && /^Code: 395\b/.test(error.message)) return 'set operators on arrays that hold arrays or objects';
  return undefined;
}

export interface ClickHouseDialectOptions {
  /** Whether the project has user mappings (then every scan resolves mapped users); default true. */
  userMappings?: boolean;
}

export class ClickHouseDialect implements Dialect {
  string = string;

  constructor(private readonly options: ClickHouseDialectOptions = {}) {}

  get mapsUsers(): boolean {
    return this.options.userMappings !== false;
  }

  /** Whether a project has user mappings, so that scans of projects without any skip them. */
  static userMappingsQuery(appId: number): string {
    return `SELECT count() > 0 AS mapped FROM (${currentUserMappings(appId)})`;
  }

  /** A property's value as JSON text ('' when missing), from the split top-level keys and values. */
  private raw(property: PropertyRef & { kind: 'event' | 'custom' }): string {
    const key = string(property.name);
    if (property.kind === 'event') return `e.property_values[indexOf(e.property_keys, ${key})]`;
    // The event's own user properties win over the profile (not on $identify, whose keys are operations).
    return `if(e.event_type != '$identify' AND has(e.user_property_keys, ${key}), e.user_property_values[indexOf(e.user_property_keys, ${key})], ${profileValue(key)})`;
  }

  /**
   * The text of a property's value: strings unescaped, other JSON as its text, null and missing
   * as NULL. `start_version` and `paying` set in the profile (the Identify API's fields) win over
   * those of the user's events.
   */
  private text(property: PropertyRef): string {
    if (property.kind !== 'builtIn') return textOf(this.raw(property));
    if (property.name === 'start_version') return `ifNull(${textOf(profileValue(string(property.name)))}, h.start_version)`;
    if (property.name === 'paying') return `ifNull(${textOf(profileValue(string(property.name)))}, if(e.ingest_seq >= h.first_paid, 'true', 'false'))`;
    return BUILT_IN_COLUMNS[property.name]!;
  }

  /**
   * The values of a property as a set: an array's elements, else its `text` alone (NULL when
   * missing). Only the rows `scope` selects can refuse the query (a row of another event type
   * read in the same block holding a nested array under the key does not).
   */
  private elements(property: PropertyRef, text: string, scope: string): string {
    if (property.kind === 'builtIn') return `[${text}]`;
    const raw = this.raw(property);
    const isArray = `substring(${raw}, 1, 1) = '['`;
    // Both branches of `if` are computed for every row: the check applies to arrays only.
    const checked = `if(throwIf(${scope} AND ${isArray} AND NOT match(${raw}, ${string(FLAT_ARRAY)})) = 0, ${raw}, '')`;
    return `if(${isArray}, arrayMap(x -> ${textOf('x')}, extractAll(${checked}, ${string(SCALAR)})), [${textOf(raw)}])`;
  }

  /** The primitives of the shared condition compiler (../dialect-conditions.ts). */
  private readonly primitives: ConditionPrimitives = {
    text: (property) => this.text(property),
    string,
    number: (text) => this.number(text),
    numeral: (value) => this.numeral(value),
    orFalse: (condition) => `ifNull(${condition}, 0)`,
    containsAny: (text, values) => `(${values.map((v) => `position(${text}, ${string(v)}) > 0`).join(' OR ')})`,
    setIs: (property, text, values, scope) => {
      const elements = `arrayFilter(x -> isNotNull(x), ${this.elements(property, text, scope)})`;
      return `(arraySort(arrayDistinct(${elements})) = arraySort(arrayDistinct([${values.map(string).join(', ')}])))`;
    },
  };

  /** `scope`: the rows the condition is asked of (see `elements`). */
  condition(condition: Condition, scope = '1'): string {
    return conditionSql(this.primitives, condition, scope);
  }

  private segmentCondition(condition: Condition | CohortCondition, appId: number): string {
    if (!('cohortId' in condition)) return this.condition(condition);
    // GLOBAL: with shards the members are on the first one only (store/clickhouse/shards.ts).
    return `${condition.member ? '' : 'NOT '}e.svc_id GLOBAL IN (${currentCohortMembers(appId, condition.cohortId, string)})`;
  }

  /** The conditions an event meets to be one of the selector's (the same selection as DuckDbDialect's). */
  private selects({ eventType, conditions }: EventSelector): string[] {
    const ofType = SPECIAL_EVENT_TYPES.get(eventType) ?? `e.event_type = ${string(plainEventType(eventType))}`;
    return [...(ofType === '' ? [] : [ofType]), ...conditions.map((c) => this.condition(c, ofType === '' ? '1' : ofType))];
  }

  private matches(selector: EventSelector): string {
    const conditions = this.selects(selector);
    return conditions.length === 0 ? '1' : `(${conditions.join(' AND ')})`;
  }

  /**
   * Time, then ingestion, as one Decimal128 (`time * 10^18 + ingest_seq`, ordered as the pair
   * while |ingest_seq| < 10^18 and |time| < 10^20 ms): 18.16 has no 128-bit integers, and argMax
   * over a tuple took twice as long.
   */
  timeOrderKey(time: string, ingestSeq: string): string {
    return `toDecimal128(${time}, 0) * 1000000000000000000 + ${ingestSeq}`;
  }

  /** uniqExact: `uniq` and `count(DISTINCT)` under other settings are approximate; ifNull: over a Nullable column, no rows give NULL. */
  distinctCount = (expression: string) => `ifNull(uniqExact(${expression}), 0)`;
  countWhere = (condition: string) => `countIf(${condition})`;
  anyOf = (condition: string) => `max(${condition})`;
  valueAtMax = (value: string, key: string) => `argMax(${value}, ${key})`;
  /** toFloat64OrNull parses with 18.16's fast float parser (see the header: may be 1 ulp off). */
  number = (text: string) => `toFloat64OrNull(${text})`;
  /** 18.16's parser refuses literals below the normal range (5e-324 is a syntax error); its text reader takes them, as it reads a stored value's text. */
  numeral = (value: number) => (value !== 0 && Math.abs(value) < MIN_NORMAL ? `toFloat64(${string(String(value))})` : String(value));
  integer = (expression: string) => `toInt64(${expression})`;
  double = (expression: string) => `toFloat64(${expression})`;
  quotient = (dividend: string, divisor: string) => `intDiv(${dividend}, ${divisor})`;
  /** Tuples, so that groupArray keeps NULL values; sorted by the tuple of the order keys. */
  orderedList = (value: string, orderBy: string[]) => `arrayMap(x -> x.1, arraySort(x -> x.2, groupArray(tuple(${value}, tuple(${orderBy.join(', ')})))))`;

  /**
   * Per user, from each entry the times of the steps on its path: the next step-k event after
   * the one of step k-1 (sequential: the very next event, if of step k). Every array function
   * takes whole arrays of the same length and no lambda reads an array from outside: 18.16
   * copies what a lambda captures once per element, which made a nested search quadratic in
   * time and memory. The winner per user and day, then per user (furthest, then earliest), in
   * `argMax` of tuples; medians from the sorted transition times (interpolated, as DuckDB's).
   */
  chainedFunnel({ steps, windowMs, sequential, grouped, stepEvents }: ChainedFunnel): string {
    const later = Array.from({ length: steps - 1 }, (_, i) => i + 1);
    const times = Array.from({ length: steps }, (_, k) => `t${k}`);
    // Each user's events in one list, sorted once: by time, first step, then ingestion (unique per event).
    const fieldsOfEvent = ['time', 'first_step', 'ingest_seq', 'mask', 'entry', 'bucket', grouped ? 'p0' : "nullif('', '')"];
    const listOf = (list: string, field: string) => `arrayMap(x -> tupleElement(x, ${fieldsOfEvent.indexOf(field) + 1}), user_events) AS ${list}`;
    const userLists = `SELECT svc_id, ${listOf('at', 'time')}, ${listOf('masks', 'mask')}, ${listOf('entries', 'entry')}, ${listOf('days', 'bucket')}, ${listOf('groups', fieldsOfEvent[6]!)}
      FROM (SELECT svc_id, arraySort(groupArray(tuple(${fieldsOfEvent.join(', ')}))) AS user_events FROM (${stepEvents}) GROUP BY svc_id HAVING max(entry))`;
    const chains = sequential ? sequentialChains(steps) : orderedChains(steps);
    // k0: the entry's position (the earliest wins among equals).
    const entryLists = [`arrayFilter((i, e) -> e != 0, arrayEnumerate(entries), entries)`, ...['days', 'groups'].map((list) => `arrayFilter((x, e) -> e != 0, ${list}, entries)`), ...times.map((t) => `${t}_of_entries`)];
    const fieldsOfEntry = ['k0', 'bucket', 'g', ...times];
    const entriesOfUsers = `SELECT svc_id, arrayJoin(arrayMap((${fieldsOfEntry.join(', ')}) -> tuple(${fieldsOfEntry.join(', ')}), ${entryLists.join(', ')})) AS e FROM (${chains(userLists)})`;
    const depth = ['1', ...later.map((k) => `(t${k} <= t0 + ${windowMs})`)].join(' + ');
    const entryFields = fieldsOfEntry.map((field, i) => `tupleElement(e, ${i + 1}) AS ${field}`);
    const paths = `SELECT svc_id, ${entryFields.join(', ')}, ${this.bucketLabel('bucket', 'day')} AS day, ${depth} AS depth FROM (${entriesOfUsers})`;
    const fields = ['k0', 'g', 'depth', ...Array.from({ length: steps }, (_, k) => `t${k}`)];
    // The winner: the furthest, then the earliest entry (k0 a position, under 10^9).
    const rank = (tuple: string) => `tupleElement(${tuple}, 3) * 1000000000 - tupleElement(${tuple}, 1)`;
    const bestOfDay = `SELECT svc_id, day, argMax(tuple(${fields.join(', ')}), depth * 1000000000 - k0) AS b FROM (${paths}) GROUP BY svc_id, day`;
    // Each user's winner, then one row for it (whole 1) and one per day's winner (whole 0), all
    // counted in the winner's group: the paths are computed once (18.16 has no CTEs to share them).
    const best = `SELECT argMax(b, ${rank('b')}) AS w, groupArray(tuple(day, b)) AS ofDays FROM (${bestOfDay}) GROUP BY svc_id`;
    const rows = `SELECT tupleElement(w, 2) AS wg, tupleElement(x, 1) AS d, tupleElement(x, 2) AS whole, tupleElement(x, 3) AS b
      FROM (SELECT w, arrayJoin(arrayConcat([tuple('', toUInt8(1), w)], arrayMap(o -> tuple(tupleElement(o, 1), toUInt8(0), tupleElement(o, 2)), ofDays))) AS x FROM (${best}))`;
    const unpacked = (tuple: string) => fields.map((field, i) => `tupleElement(${tuple}, ${i + 1}) AS ${field}`).join(', ');
    const median = (name: string, value: string, condition: string) =>
      `arraySort(groupArrayIf(${value}, ${condition})) AS s${name}, if(length(s${name}) = 0, NULL, if(length(s${name}) % 2 = 1, toFloat64(s${name}[intDiv(length(s${name}), 2) + 1]), (s${name}[intDiv(length(s${name}), 2)] + s${name}[intDiv(length(s${name}), 2) + 1]) / 2)) AS m${name}`;
    const average = (name: string, value: string, condition: string) => `if(countIf(${condition}) = 0, NULL, avgIf(${value}, ${condition})) AS a${name}`;
    const measures = [
      ...Array.from({ length: steps }, (_, k) => `countIf(depth > ${k}) AS r${k}`),
      ...later.flatMap((k) => [median(`${k}`, `t${k} - t${k - 1}`, `depth > ${k}`), average(`${k}`, `t${k} - t${k - 1}`, `depth > ${k}`)]),
      median('0', `t${steps - 1} - t0`, `depth = ${steps}`),
      average('0', `t${steps - 1} - t0`, `depth = ${steps}`),
    ].join(', ');
    // The sorted lists of times stay in the server: only the measures are answered.
    const answered = ['g', 'day', 'whole', ...Array.from({ length: steps }, (_, k) => [`r${k}`, `m${k}`, `a${k}`]).flat()];
    return `SELECT ${answered.join(', ')} FROM (SELECT wg AS g, if(whole = 1, NULL, d) AS day, whole, ${measures} FROM (SELECT wg, d, whole, ${unpacked('b')} FROM (${rows})) GROUP BY wg, d, whole)`;
  }

  /**
   * No grouping sets on 18.16, and a second GROUP BY reads the source again: the aggregates'
   * states per bucket and group, then per group their values per bucket and their merge over
   * the range, as arrays joined out into rows (the last one the whole range's). The label is
   * made from the states' rows, not per source row.
   */
  perBucketAndWhole({ source, interval, groups, aggregates, where }: PerBucketAndWhole): string {
    const names = Object.keys(aggregates);
    const states = Object.entries(aggregates).map(([name, aggregate]) => `${AGGREGATE_FUNCTIONS[aggregate.kind]}State(${aggregatedValue(this, aggregate) ?? ''}) AS ${name}`);
    const perBucket = `SELECT bucket, ${[...groups, ...states].join(', ')} FROM ${source} AS s WHERE ${where ?? '1'} GROUP BY ${['bucket', ...groups].join(', ')}`;
    const arrays = [
      `arrayPushBack(groupArray(${this.bucketLabel('bucket', interval)}), '') AS labels`,
      `arrayMap(i -> toUInt8(i = length(labels)), arrayEnumerate(labels)) AS wholes`,
      ...Object.entries(aggregates).map(([name, { kind }]) => `arrayPushBack(groupArray(ifNull(finalizeAggregation(${name}), 0)), ifNull(${AGGREGATE_FUNCTIONS[kind]}Merge(${name}), 0)) AS ${name}_values`),
    ];
    const perGroup = `SELECT ${[...groups, ...arrays].join(', ')} FROM (${perBucket})${groups.length > 0 ? ` GROUP BY ${groups.join(', ')}` : ''}`;
    const joined = ['labels AS label', 'wholes AS whole', ...names.map((name) => `${name}_values AS ${name}`)];
    return `SELECT if(whole = 1, NULL, label) AS bucket, ${[...groups, ...names, 'whole'].join(', ')} FROM (${perGroup}) ARRAY JOIN ${joined.join(', ')}`;
  }

  /** No VALUES tables and no EXCLUDE on 18.16: each row's targets are an array of its bucket, joined out. */
  rebucketed(scan: EventScan, sql: string, { labels, size }: RollingWindows): string {
    const columns = [...SCAN_COLUMNS, ...scan.properties.map((_, i) => `p${i}`), ...(scan.flags ?? []).map((_, i) => `f${i}`)].join(', ');
    const buckets = `[${labels.map((label) => this.bucketOf(label)).join(', ')}]`;
    // The windows holding a bucket: the `size` buckets from it on (a bucket outside the labels: none).
    const target = `arrayJoin(arraySlice(${buckets}, indexOf(${buckets}, source_bucket), if(indexOf(${buckets}, source_bucket) = 0, 0, ${size})))`;
    return `SELECT ${columns}, ${target} AS bucket FROM (SELECT ${columns}, bucket AS source_bucket FROM (${sql}))`;
  }

  /** No common table expressions on 18.16: the SELECT is read again where it is used. */
  shared(_name: string, sql: string, body: (relation: string) => string): string {
    return body(`(${sql})`);
  }

  /** 18.16 joins on equal keys only, with the strictness written out: every pair of rows. */
  innerJoin(left: string, right: string, keys: string[]): string {
    return `(${left}) AS l ALL INNER JOIN (${right}) AS r USING (${keys.join(', ')})`;
  }

  /** No correlated subqueries on 18.16: a tuple IN. */
  userInBucketOf(sql: string): string {
    return `(svc_id, bucket) IN (SELECT svc_id, bucket FROM (${sql}))`;
  }

  eventTypes(appId: number): string {
    return `SELECT DISTINCT event_type FROM events WHERE app_id = ${integer(appId)}`;
  }

  /** A top-level key present with any value, null included (as DuckDB's json_extract IS NOT NULL). */
  eventPropertySeen(appId: number, property: string, eventTypes: readonly string[] | null): string {
    const ofTypes = eventTypes === null ? '' : ` AND event_type IN (${eventTypes.map(string).join(', ')})`;
    // A column, not `SELECT 1`: through a Distributed table 18.16 then failed with "Cannot find column `has(…)` in source stream".
    return `SELECT app_id FROM events WHERE app_id = ${integer(appId)}${ofTypes} AND has(property_keys, ${string(property)}) LIMIT 1`;
  }

  /**
   * The local wall time of the bucket start, as a DateTime in UTC (printed as the wall time):
   * one value per label, so the hour repeated when clocks go back is one bucket, as on DuckDB.
   */
  bucket(interval: Interval, timeZone: string, epochMs: string, fromMs: number, toMs: number): string {
    const local = `toDateTime(intDiv(${localWallMs(timeZone, epochMs, fromMs, toMs)}, 1000), 'UTC')`;
    switch (interval) {
      case 'minute5':
        return `toStartOfFiveMinute(${local})`;
      case 'hour':
        return `toStartOfHour(${local})`;
      case 'day':
        return `toStartOfDay(${local})`;
      case 'week':
        return `toDateTime(toMonday(${local}), 'UTC')`;
      case 'month':
        return `toDateTime(toStartOfMonth(${local}), 'UTC')`;
    }
  }

  /** toString, not formatDateTime: 18.16's formatDateTime prints in the server's zone unless given one. */
  bucketLabel(bucket: string, interval: Interval): string {
    return interval === 'minute5' || interval === 'hour'
      ? `concat(substring(toString(${bucket}), 1, 10), 'T', substring(toString(${bucket}), 12, 5), ':00')`
      : `substring(toString(${bucket}), 1, 10)`;
  }

  bucketOf(label: string): string {
    const [day, time = '00:00:00'] = label.split('T');
    return `toDateTime(${string(`${day} ${time}`)}, 'UTC')`;
  }

  userMappings(appId: number): string {
    return currentUserMappings(appId);
  }

  /** The profile's latest version, unless that version deleted it. */
  userProfile(appId: number, svcId: number): string {
    return `SELECT properties FROM (SELECT argMax(properties, version) AS properties, argMax(deleted, version) AS deleted FROM profiles WHERE app_id = ${integer(appId)} AND svc_id = ${integer(svcId)} GROUP BY svc_id) WHERE deleted = 0`;
  }

  userSummaries(appId: number, ofUsers: string): string {
    return `SELECT uid AS svc_id, first_version AS start_version, nullIf(first_paid_seq, ${NEVER_PAID}) AS first_paid FROM (${currentUserSummaries(appId, ofUsers)})`;
  }

  /** Stored as its text already. */
  jsonText(column: string): string {
    return column;
  }

  /** Bytes on both sides (ClickHouse's substring and length count bytes). */
  startsWith(text: string, prefix: string): string {
    return `substring(${text}, 1, ${Buffer.byteLength(prefix)}) = ${string(prefix)}`;
  }

  scan(scan: EventScan): string {
    const timeColumn = scan.timeColumn ?? 'time';
    const appId = integer(scan.appId);
    const where = [
      `e.app_id = ${appId}`,
      'e.svc_id IS NOT NULL',
      `e.${timeColumn} >= ${integer(scan.range.startMs)}`,
      `e.${timeColumn} < ${integer(scan.range.endMs)}`,
      ...(scan.selector ? this.selects(scan.selector) : []),
      ...scan.segment.map((c) => this.segmentCondition(c, scan.appId)),
      ...(scan.flaggedOnly && scan.flags ? [`(${scan.flags.map((selector) => this.matches(selector)).join(' OR ')})`] : []),
    ];
    // A user's first events: 18.16 joins on equal keys only, a tuple IN does the same here. Each
    // own user's first time, then the (mapped) user's: outside the shards' reads, which lose a
    // scalar subquery's value on 18.16.
    const firstEvents = (svcIdAndTime: string, user: (svcId: string) => string) =>
      `${svcIdAndTime} IN (SELECT ${user('own_svc_id')} AS user_svc_id, min(first_time) FROM (SELECT svc_id AS own_svc_id, min(time) AS first_time FROM events WHERE app_id = ${appId} AND svc_id IS NOT NULL GROUP BY svc_id) GROUP BY user_svc_id)`;
    // Aliases are not names of columns: ClickHouse resolves an alias before a column of the
    // same name, even one written `e.<name>`.
    const columns = [
      'e.time',
      'e.ingest_seq',
      'e.event_type',
      'e.session_id',
      `${ACTIVE} AS active`,
      ...(scan.revenue ? ['e.revenue'] : []),
      ...(scan.interval ? [`${this.bucket(scan.interval, scan.timeZone, `e.${timeColumn}`, scan.range.startMs, scan.range.endMs)} AS bucket`] : []),
      ...scan.properties.map((p, i) => `${this.text(p)} AS p${i}`),
      ...(scan.flags ?? []).map((selector, i) => `${this.matches(selector)} AS f${i}`),
    ];
    // Grouping keys leave the scan non-Nullable (18.16 groups by Nullable columns several times
    // slower), renamed outside the SELECT that filters: its WHERE would read an alias of a column's name.
    const sessionKeyed = timeColumn === 'session_id';
    const ownColumns = columns.map((c) => (sessionKeyed && c === 'e.session_id' ? 'assumeNotNull(e.session_id) AS own_session_id' : c));
    const ownFirstEvents = this.options.userMappings === false && scan.firstEventsOnly ? [firstEvents('(e.svc_id, e.time)', (svcId) => svcId)] : [];
    const own = `SELECT assumeNotNull(e.svc_id) AS own_svc_id, ${ownColumns.join(', ')} FROM events AS e${this.userState(scan)} WHERE ${[...where, ...ownFirstEvents].join(' AND ')}`;
    const rest = [...SCAN_COLUMNS.slice(1), ...(scan.revenue ? ['revenue'] : []), ...(scan.interval ? ['bucket'] : []), ...scan.properties.map((_, i) => `p${i}`), ...(scan.flags ?? []).map((_, i) => `f${i}`)];
    const renamed = rest.map((c) => (sessionKeyed && c === 'session_id' ? 'own_session_id AS session_id' : c));
    if (this.options.userMappings === false) return `SELECT own_svc_id AS svc_id, ${renamed.join(', ')} FROM (${own})`;
    const mapped = `SELECT ${mappedUser(scan.appId, 'own_svc_id')} AS svc_id, ${renamed.join(', ')} FROM (${own})`;
    // A mapped user's first event is the first of its own and its global user's (`svc_id` is the mapped one there).
    return scan.firstEventsOnly ? `SELECT * FROM (${mapped}) WHERE ${firstEvents('(svc_id, time)', (svcId) => mappedUser(scan.appId, `assumeNotNull(${svcId})`))}` : mapped;
  }

  /** The join of the user's history and profile versions (`h`), when the scan reads them. */
  private userState(scan: EventScan): string {
    const selectors = [...(scan.selector ? [scan.selector] : []), ...(scan.flags ?? [])];
    const referenced = [...scan.properties, ...scan.segment.flatMap((c) => ('property' in c ? [c.property] : [])), ...selectors.flatMap((s) => s.conditions.map((c) => c.property))];
    const needsHistory = referenced.some((p) => p.kind === 'builtIn' && HISTORY.has(p.name));
    const needsProfile = needsHistory || referenced.some((p) => p.kind === 'custom');
    const appId = integer(scan.appId);
    // Kept at load (user-activity.ts); Nullable like the events' svc_id it is joined to.
    const history = `SELECT toNullable(uid) AS svc_id, first_version AS start_version, first_paid_seq AS first_paid FROM (${currentUserSummaries(scan.appId)})`;
    const profile = `SELECT toNullable(svc_id) AS svc_id, groupArray(ingest_seq) AS seqs, groupArray(property_keys) AS version_keys, groupArray(property_values) AS version_values
      FROM (SELECT svc_id, ingest_seq, property_keys, property_values FROM profile_versions WHERE app_id = ${appId} ORDER BY ingest_seq) GROUP BY svc_id`;
    // The columns named: on shards, 18.16 answers `SELECT *` of this join with "Duplicate column svc_id in block".
    const withProfile = `SELECT svc_id, start_version, first_paid, seqs, version_keys, version_values FROM (${history}) ANY LEFT JOIN (${profile}) USING (svc_id)`;
    const state = needsHistory ? withProfile : needsProfile ? profile : undefined;
    // GLOBAL: with shards, computed whole where the profile versions are (store/clickhouse/shards.ts).
    return state ? ` GLOBAL ANY LEFT JOIN (${state}) AS h USING (svc_id)` : '';
  }
}

/**
 * A mapped user counts as the user it is mapped to (properties stay its own): an `svc_id`
 * through `transform` of the current mappings (-1 first: no empty arrays in transform). Applied
 * outside the scan: an alias `svc_id` inside it would hide the column.
 */
function mappedUser(appId: number, svcId: string): string {
  const pairs = `(SELECT tuple(arrayPushFront(groupArray(from_svc), toInt64(-1)), arrayPushFront(groupArray(to_svc), toInt64(-1))) FROM (${currentUserMappings(appId)}))`;
  return `transform(${svcId}, tupleElement(${pairs}, 1), tupleElement(${pairs}, 2), ${svcId})`;
}

/** The time of a step not reached: after every instant (2^53, exact as a double too), never within a window. */
const MISSING = 'toInt64(9007199254740992)';

const hasStep = (mask: string, k: number) => `bitAnd(${mask}, ${2 ** k}) != 0`;

/**
 * A SELECT of each user's `svc_id, entries, days, groups` and, per step k, `t<k>_of_entries`:
 * the time of step k on the path of each entry (MISSING when not reached), from each user's
 * lists in event order (`at` times, `masks`, `entries`, `days` buckets, `groups`).
 */
type Chains = (userLists: string) => string;

/**
 * Ordered: from the last step back, each step-(k-1) event gets the times of the path from the
 * first step-k event after it (later in time, or at the same time and of a later first step).
 * That event is found by one sort: the step-k events (each with the times of its own path) and
 * the step-(k-1) events in one list by a key descending, each of the latter after the former of
 * its own moment; a running sum of the differences between consecutive step-k events' times
 * then reads, at each step-(k-1) event, the last step-k event before it in that order.
 */
function orderedChains(steps: number): Chains {
  const firstStep = Array.from({ length: steps }, (_, k) => k).reduceRight((rest, k) => `if(${hasStep('m', k)}, ${k}, ${rest})`, `${steps}`);
  const passed = ['svc_id', 'entries', 'days', 'groups', 'masks', 'at', 'keys'];
  // Keys are even for a step-k event, odd (one more) for a step-(k-1) event of the same moment.
  const base = (userLists: string) =>
    `SELECT svc_id, entries, days, groups, masks, at, arrayMap((t, m) -> (t * ${steps + 1} + ${firstStep}) * 2, at, masks) AS keys FROM (${userLists})`;
  const ofStep = (k: number, list: string) => (k === 0 ? `arrayFilter((x, e) -> e != 0, ${list}, entries)` : `arrayFilter((x, m) -> ${hasStep('m', k)}, ${list}, masks)`);
  return (userLists) => {
    const last = steps - 1;
    let chains = `SELECT ${passed.join(', ')}, ${ofStep(last, 'keys')} AS c${last}_keys, ${ofStep(last, 'at')} AS c${last}_t${last} FROM (${base(userLists)})`;
    for (let k = last; k >= 1; k--) {
      const merged = `arrayConcat(arrayReverse(c${k}_keys), q${k}_keys)`;
      const path = Array.from({ length: steps - k }, (_, i) => k + i);
      const filled = path.map((j) => {
        const descending = `arrayReverse(c${k}_t${j})`;
        const differences = `arrayMap((a, b) -> a - b, ${descending}, arraySlice(arrayPushFront(${descending}, ${MISSING}), 1, length(c${k}_t${j})))`;
        const sorted = `arrayReverseSort((v, x) -> x, arrayConcat(${differences}, arrayMap(x -> toInt64(0), q${k}_keys)), merged${k})`;
        return `arrayMap(x -> x + ${MISSING}, arrayReverse(arrayFilter((c, x) -> bitAnd(x, 1) = 1, arrayCumSum(${sorted}), arrayReverseSort(merged${k})))) AS c${k - 1}_t${j}`;
      });
      const next = [...(k > 1 ? [`arrayMap(x -> x - 1, q${k}_keys) AS c${k - 1}_keys`] : []), `${ofStep(k - 1, 'at')} AS c${k - 1}_t${k - 1}`, ...filled];
      chains = `SELECT ${passed.join(', ')}, ${next.join(', ')} FROM (SELECT *, arrayMap(x -> x + 1, ${ofStep(k - 1, 'keys')}) AS q${k}_keys, ${merged} AS merged${k} FROM (${chains}))`;
    }
    return `SELECT svc_id, entries, days, groups, ${Array.from({ length: steps }, (_, j) => `c0_t${j} AS t${j}_of_entries`).join(', ')} FROM (${chains})`;
  };
}

/** Sequential: each event's path continues with the very next event when it is of the next step. */
function sequentialChains(steps: number): Chains {
  return (userLists) => {
    const last = steps - 1;
    const passed = ['svc_id', 'entries', 'days', 'groups', 'at', 'next_masks'];
    let chains = `SELECT svc_id, entries, days, groups, at, arrayPushBack(arrayPopFront(masks), toInt64(0)) AS next_masks, at AS c${last}_t${last} FROM (${userLists})`;
    for (let k = last; k >= 1; k--) {
      const path = Array.from({ length: steps - k }, (_, i) => k + i);
      const next = path.map((j) => `arrayMap((m, v) -> if(${hasStep('m', k)}, v, ${MISSING}), next_masks, arrayPushBack(arrayPopFront(c${k}_t${j}), ${MISSING})) AS c${k - 1}_t${j}`);
      chains = `SELECT ${passed.join(', ')}, at AS c${k - 1}_t${k - 1}, ${next.join(', ')} FROM (${chains})`;
    }
    return `SELECT svc_id, entries, days, groups, ${Array.from({ length: steps }, (_, j) => `arrayFilter((x, e) -> e != 0, c0_t${j}, entries) AS t${j}_of_entries`).join(', ')} FROM (${chains})`;
  };
}

function integer(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`Not an integer: ${value}`);
  return String(value);
}
