// What reporting asks of an engine's SQL: the reporting query model printed as the engine's
// dialect (duckdb/dialect.ts, clickhouse/dialect.ts). The runners are written against this
// interface alone; another engine adds its own dialect.
import type { EventScan } from '../model/query.js';
import { type Interval, offsetsBetween } from '../model/time.js';

/** What an ordered or sequential funnel is computed from; each engine reads the form it follows paths in. */
/** Integers as the text of a SQL list (both engines). */
export const integers = (values: Iterable<number>) => [...values].map((value) => String(Math.trunc(value))).join(', ');

export interface ChainedFunnel {
  steps: number;
  windowMs: number;
  sequential: boolean;
  /** Entries are step-1 events before this (ms); later ones only count as later steps. */
  entriesEndMs: number;
  /** Whether the scan's `p0` is the group-by value. */
  grouped: boolean;
  /** A SELECT of the funnel's events with `svc_id, time, bucket, f<k>, [p0]` and their order key `k` (sequential: a position). */
  events: string;
  /** A SELECT of the funnel's events with `svc_id, time, ingest_seq, bucket, mask, first_step, entry, [p0]`. */
  stepEvents: string;
}

export interface Dialect {
  /** Whether scans resolve mapped users (the project has user mappings). */
  readonly mapsUsers: boolean;
  /** A SELECT of `svc_id, time, ingest_seq, event_type, session_id, active, [bucket], p0...` for the scan. */
  scan(scan: EventScan): string;
  /** The bucket (as a scan's `bucket` column) of an epoch-ms expression, for instants within [fromMs, toMs). */
  bucket(interval: Interval, timeZone: string, epochMs: string, fromMs: number, toMs: number): string;
  /** The label (`bucketLabels`' format) of a scan's `bucket` value, for use after grouping by it. */
  bucketLabel(bucket: string, interval: Interval): string;
  /** A scan's `bucket` value of a label. */
  bucketOf(label: string): string;
  /** A SELECT of `event_type` for every event type the project has. */
  eventTypes(appId: number): string;
  /** A SELECT of one row when an event of the project (of one of `eventTypes`, any when null) has the event property. */
  eventPropertySeen(appId: number, property: string, eventTypes: readonly string[] | null): string;
  /**
   * An ordered or sequential funnel's rows (`g, day, whole, r<k>, m<k>, a<k>`, as
   * runners/funnels.ts reads them): per user the winning path from its entries, and per entry
   * day the day's winner, counted in the group of the user's winner.
   */
  chainedFunnel(funnel: ChainedFunnel): string;
  string(value: string): string;
  /** An expression that orders a scan's rows by time, then by ingestion (one comparable value). */
  timeOrderKey(time: string, ingestSeq: string): string;
  /** Aggregate: the exact number of distinct non-null values of an expression. */
  distinctCount(expression: string): string;
  /** Aggregate: the number of rows for which a condition holds. */
  countWhere(condition: string): string;
  /** Aggregate: whether a condition holds for some row. */
  anyOf(condition: string): string;
  /** Aggregate: the value of the row with the largest key. */
  valueAtMax(value: string, key: string): string;
  /** The number a text is (a double), NULL when it is not a number. */
  number(text: string): string;
  /** A finite number as a literal, read as `number` reads its text. */
  numeral(value: number): string;
  /** A whole-number double (or a boolean, as 0 or 1) as an integer. */
  integer(expression: string): string;
  /** A number as a double. */
  double(expression: string): string;
  /** The integer quotient of two non-negative integers (rounded down). */
  quotient(dividend: string, divisor: string): string;
  /** Aggregate: the list of a value's values, NULLs included, in the order of `orderBy` (unique per row). */
  orderedList(value: string, orderBy: string[]): string;
  /**
   * A SELECT of `bucket, <groups>, <aggregates' names>, whole`: the aggregates per bucket and groups
   * (`whole` false or 0, `bucket` the bucket's label), and per groups over every bucket (`whole` true
   * or 1, `bucket` NULL), of the rows of `source` (a parenthesized relation, alias `s`) that meet `where`.
   */
  perBucketAndWhole(query: PerBucketAndWhole): string;
  /**
   * A SELECT of the scan's rows (`sql`, printed from `scan`, with buckets) that counts each row
   * towards the rolling windows that hold its bucket: a row of `labels[i]` once for each of
   * `labels[i .. i + size - 1]`, its `bucket` that target. Linear in the labels, whatever `size`.
   */
  rebucketed(scan: EventScan, sql: string, windows: RollingWindows): string;
  /** A condition on a row of a scan with buckets (alias `s`): its user has a row of the same bucket in the scan `sql`. */
  userInBucketOf(sql: string): string;
  /** A FROM clause: the rows of two parenthesized SELECTs with equal `keys` (their other columns named apart). */
  innerJoin(left: string, right: string, keys: string[]): string;
  /**
   * A query (`body`) that reads a SELECT (`sql`) several times, each time where it writes the
   * relation it is given (after FROM): computed once where the engine can keep it (`name`).
   */
  shared(name: string, sql: string, body: (relation: string) => string): string;
  /** A SELECT of `from_svc, to_svc`: the project's current user mappings (a mapped user counts as `to_svc`). */
  userMappings(appId: number): string;
  /** A SELECT of `properties`: the user's current profile as JSON text (no row when it has none). */
  userProfile(appId: number, svcId: number): string;
  /**
   * A SELECT of `svc_id, start_version, first_paid` of the project's users that `ofUsers` (a
   * condition on `svc_id`) holds, as kept at load: the first app_version, and the ingest_seq of
   * the first revenue event (null for none).
   */
  userSummaries(appId: number, ofUsers: string): string;
  /** A JSON column of `events` as its text. */
  jsonText(column: string): string;
  /** A condition: a text starts with `prefix`. */
  startsWith(text: string, prefix: string): string;
}

/** Rolling windows of `size` buckets over `labels` (oldest first): each window ends at its label. */
export interface RollingWindows {
  labels: string[];
  size: number;
}

/**
 * An aggregate per bucket and over the range, 0 where there is nothing to aggregate: the rows
 * (`count` without a column), the non-NULL values of a column (`count`), their distinct values,
 * their sum, least or greatest. `numeric`: the number the column's text is (NULL when not a number).
 */
export interface Aggregate {
  kind: 'count' | 'distinct' | 'sum' | 'min' | 'max';
  column?: string;
  numeric?: boolean;
}

export interface PerBucketAndWhole {
  /** A parenthesized relation with a `bucket` column and the group columns. */
  source: string;
  interval: Interval;
  groups: string[];
  /** Aggregates by their column names. */
  aggregates: Record<string, Aggregate>;
  where?: string;
  /**
   * Only the groups whose `column` over the range is among the `count` largest (ties
   * included) need their per-bucket rows: a dialect may leave out the others' (a group-by
   * answers its top groups only, and the per-bucket rows of all groups are most of its work).
   */
  onlyTop?: { column: string; count: number };
}

/** What an aggregate reads: its column (as the number its text is when `numeric`); none for `count` of rows. */
export function aggregatedValue(dialect: Pick<Dialect, 'number'>, { column, numeric }: Aggregate): string | undefined {
  return column === undefined ? undefined : numeric ? dialect.number(column) : column;
}

/** An aggregate as one SQL expression of a dialect. */
export function aggregateSql(dialect: Pick<Dialect, 'number' | 'distinctCount'>, aggregate: Aggregate): string {
  const { kind } = aggregate;
  const value = aggregatedValue(dialect, aggregate) ?? '*';
  if (kind === 'count') return `count(${value})`;
  if (kind === 'distinct') return dialect.distinctCount(value);
  return `coalesce(${kind}(${value}), 0)`;
}

/**
 * An epoch-ms expression (an instant within [fromMs, toMs)) as the local wall time in ms since
 * 1970, in SQL both dialects read: the zone's offsets over the range are a CASE on the epoch (a
 * few DST changes at most), much cheaper than a time zone conversion per row, and the same
 * offsets on every engine. The hour repeated when clocks go back is one wall hour.
 */
export function localWallMs(timeZone: string, epochMs: string, fromMs: number, toMs: number): string {
  const offsets = offsetsBetween(timeZone, fromMs, toMs);
  const offset = offsets.length === 1 ? String(offsets[0]!.offsetMs) : `CASE ${offsets.slice(1).reverse().map((o) => `WHEN ${epochMs} >= ${o.fromMs} THEN ${o.offsetMs}`).join(' ')} ELSE ${offsets[0]!.offsetMs} END`;
  return `(${epochMs} + ${offset})`;
}

const DAY_MS = 86_400_000;

/**
 * The number of the local day, week (from Monday) or month of an epoch-ms expression (an instant
 * within [fromMs, toMs)), counted from 1970 (`intervalNumberOf` of model/time.ts for a bucket's
 * label), in SQL both dialects read: arithmetic on the local wall time for days and weeks
 * (1970-01-01 was a Thursday: day + 3 counts weeks from Monday), and for months a CASE on the
 * wall times the months of the range start at.
 */
export function intervalNumber(dialect: Dialect, interval: 'day' | 'week' | 'month', timeZone: string, epochMs: string, fromMs: number, toMs: number): string {
  const wall = localWallMs(timeZone, epochMs, fromMs, toMs);
  // Integer arithmetic: instants after 1970 have positive wall times.
  const day = dialect.quotient(wall, String(DAY_MS));
  if (interval === 'day') return day;
  if (interval === 'week') return dialect.quotient(`${day} + 3`, '7');
  // Wall times are within a day of the instants: the months from the one before fromMs to the one after toMs.
  const first = new Date(fromMs - DAY_MS);
  const months: { wallMs: number; number: number }[] = [];
  for (let m = first.getUTCFullYear() * 12 + first.getUTCMonth(); ; m++) {
    const wallMs = Date.UTC(Math.floor(m / 12), m % 12, 1);
    if (wallMs > toMs + DAY_MS) break;
    months.push({ wallMs, number: m - 1970 * 12 });
  }
  return `CASE ${months.slice(1).reverse().map((month) => `WHEN ${wall} >= ${month.wallMs} THEN ${month.number}`).join(' ')} ELSE ${months[0]!.number} END`;
}
