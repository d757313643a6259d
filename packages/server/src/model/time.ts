// Report ranges and buckets in a project's time zone (SEMANTICS.md, "Time"): `start`/`end`
// (`YYYYMMDD`) cover [start 00:00, end+1 00:00) local time; buckets are calendar days, weeks
// starting on Monday, months, hours or five minutes, labelled with their local start.

export type Interval = 'minute5' | 'hour' | 'day' | 'week' | 'month';

/** The `i` parameter of the reporting operations. */
export function intervalOf(i: number | undefined): Interval {
  switch (i) {
    case -300000:
      return 'minute5';
    case -3600000:
      return 'hour';
    case 7:
      return 'week';
    case 30:
      return 'month';
    default:
      return 'day';
  }
}

/** A local calendar date. */
interface LocalDate {
  year: number;
  month: number;
  day: number;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const dateLabel = ({ year, month, day }: LocalDate) => `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
/** Calendar arithmetic on local dates goes through UTC, where no day is shorter than another. */
const asUtc = ({ year, month, day }: LocalDate) => Date.UTC(year, month - 1, day);
const fromUtc = (ms: number): LocalDate => {
  const d = new Date(ms);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
};
const addDays = (date: LocalDate, days: number) => fromUtc(asUtc(date) + days * 86_400_000);

/** `YYYYMMDD` → local date (the spec's pattern has checked the shape). */
export function parseReportDate(text: string): LocalDate {
  return { year: Number(text.slice(0, 4)), month: Number(text.slice(4, 6)), day: Number(text.slice(6, 8)) };
}

/** One formatter per zone: constructing one costs far more than using it. */
const formatters = new Map<string, Intl.DateTimeFormat>();

/**
 * Builds the formatters of `timeZones` before the first report asks: a process's first one loads
 * ICU's zone data, which would hold the event loop in the first reporting request.
 */
export function prepareTimeZones(timeZones: Iterable<string>): void {
  for (const timeZone of timeZones) zoneOffset(timeZone, 0);
}

/** Milliseconds by which the zone is ahead of UTC at `epochMs`. */
function zoneOffset(timeZone: string, epochMs: number): number {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, formatter);
  }
  const parts = formatter.formatToParts(epochMs);
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second')) - (epochMs - (epochMs % 1000));
}

/** The epoch of local midnight starting `date` in `timeZone` (the first instant of that day). */
export function localMidnight(timeZone: string, date: LocalDate): number {
  const wall = asUtc(date);
  let epoch = wall - zoneOffset(timeZone, wall);
  // Once more at the candidate: the offset may differ across a DST change.
  epoch = wall - zoneOffset(timeZone, epoch);
  return epoch;
}

export interface ReportRange {
  startMs: number;
  endMs: number;
  start: LocalDate;
  end: LocalDate;
  /** Calendar days in the range. */
  days: number;
}

export function reportRange(timeZone: string, start: string, end: string): ReportRange {
  const first = parseReportDate(start);
  const last = parseReportDate(end);
  return { start: first, end: last, startMs: localMidnight(timeZone, first), endMs: localMidnight(timeZone, addDays(last, 1)), days: (asUtc(last) - asUtc(first)) / 86_400_000 + 1 };
}

/** First day of the bucket holding `date`. */
function bucketDate(interval: 'day' | 'week' | 'month', date: LocalDate): LocalDate {
  if (interval === 'month') return { ...date, day: 1 };
  if (interval === 'week') return addDays(date, -((new Date(asUtc(date)).getUTCDay() + 6) % 7));
  return date;
}

/**
 * The labels of the buckets that overlap the range, oldest first: `YYYY-MM-DD` for days,
 * weeks and months (the first may start before the range), `YYYY-MM-DDTHH:mm:00` for hours
 * and five minutes (local wall time).
 */
export function bucketLabels(range: ReportRange, interval: Interval): string[] {
  const labels: string[] = [];
  if (interval === 'hour' || interval === 'minute5') {
    const step = interval === 'hour' ? 60 : 5;
    for (let date = range.start; asUtc(date) <= asUtc(range.end); date = addDays(date, 1)) {
      for (let minute = 0; minute < 24 * 60; minute += step) labels.push(`${dateLabel(date)}T${pad(Math.floor(minute / 60))}:${pad(minute % 60)}:00`);
    }
    return labels;
  }
  for (let date = bucketDate(interval, range.start); asUtc(date) <= asUtc(range.end); ) {
    labels.push(dateLabel(date));
    date = interval === 'month' ? { year: date.month === 12 ? date.year + 1 : date.year, month: (date.month % 12) + 1, day: 1 } : addDays(date, interval === 'week' ? 7 : 1);
  }
  return labels;
}

/** The range with its start moved back by `buckets` buckets of `interval` (rolling windows reach before the range). */
export function extendBack(timeZone: string, range: ReportRange, interval: Interval, buckets: number): ReportRange {
  const first = bucketDate(interval === 'week' || interval === 'month' ? interval : 'day', range.start);
  const start =
    interval === 'month'
      ? { year: first.year + Math.floor((first.month - 1 - buckets) / 12), month: ((((first.month - 1 - buckets) % 12) + 12) % 12) + 1, day: 1 }
      : addDays(first, -(interval === 'week' ? 7 * buckets : interval === 'day' ? buckets : Math.ceil(buckets / (interval === 'hour' ? 24 : 288))));
  return { ...range, start, startMs: localMidnight(timeZone, start), days: (asUtc(range.end) - asUtc(start)) / 86_400_000 + 1 };
}

/**
 * The zone's offsets over [fromMs, toMs): from each instant on, the offset in force until the
 * next. Found by stepping a day at a time and narrowing each change down to the minute.
 */
export function offsetsBetween(timeZone: string, fromMs: number, toMs: number): { fromMs: number; offsetMs: number }[] {
  const offsets = [{ fromMs, offsetMs: zoneOffset(timeZone, fromMs) }];
  for (let at = fromMs; at < toMs; at += 86_400_000) {
    const next = Math.min(at + 86_400_000, toMs);
    const offset = zoneOffset(timeZone, next);
    if (offset === offsets[offsets.length - 1]!.offsetMs) continue;
    let [low, high] = [at, next];
    while (high - low > 60_000) {
      const middle = low + Math.floor((high - low) / 2);
      if (zoneOffset(timeZone, middle) === offset) high = middle;
      else low = middle;
    }
    offsets.push({ fromMs: high - (high % 60_000), offsetMs: offset });
  }
  return offsets;
}

/** The range's instants in pieces of one bucket each: `starts[k]` (ascending; `starts[pieces]` is the range's end) and `buckets[k]`. */
export interface BucketPieces {
  starts: Float64Array;
  /** The index of the piece's bucket in `bucketLabels(range, interval)` (-1: none of them). */
  buckets: Int32Array;
}

/**
 * The range cut where an instant's bucket changes, in the dialects' bucket arithmetic (the local
 * day of an instant plus the offset `offsetsBetween` has in force), so that walking a user's
 * sorted events finds their buckets with comparisons only. Buckets follow the pieces in order,
 * except where a zone's clock goes back across midnight.
 */
export function bucketPieces(timeZone: string, range: ReportRange, interval: 'day' | 'week' | 'month'): BucketPieces {
  const index = new Map(bucketLabels(range, interval).map((label, i) => [label, i]));
  const bucketOfDay = (day: number) => index.get(dateLabel(bucketDate(interval, addDays(range.start, day)))) ?? -1;
  const offsets = offsetsBetween(timeZone, range.startMs, range.endMs);
  const firstDay = asUtc(range.start);
  const [starts, buckets]: [number[], number[]] = [[], []];
  offsets.forEach(({ fromMs, offsetMs }, i) => {
    const toMs = offsets[i + 1]?.fromMs ?? range.endMs;
    for (let from = fromMs; from < toMs; ) {
      const day = Math.floor((from + offsetMs - firstDay) / 86_400_000);
      const bucket = bucketOfDay(day);
      if (buckets[buckets.length - 1] !== bucket) {
        starts.push(from);
        buckets.push(bucket);
      }
      from = Math.min(toMs, firstDay + (day + 1) * 86_400_000 - offsetMs);
    }
  });
  starts.push(range.endMs);
  return { starts: Float64Array.from(starts), buckets: Int32Array.from(buckets) };
}

/** The piece an instant of the range falls in, by binary search. */
export function pieceAt({ starts, buckets }: BucketPieces, epochMs: number): number {
  let [low, high] = [0, buckets.length - 1];
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if (starts[middle]! <= epochMs) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** The bucket of an instant of the range. */
export function bucketAt(pieces: BucketPieces, epochMs: number): number {
  return pieces.buckets[pieceAt(pieces, epochMs)]!;
}

/** The local calendar date of an instant, `YYYY-MM-DD`. */
export function localDateLabel(timeZone: string, epochMs: number): string {
  return dateLabel(fromUtc(epochMs + zoneOffset(timeZone, epochMs)));
}

/** The label (`bucketLabels`' format) of the five-minute bucket that holds an instant. */
export function minute5Label(timeZone: string, epochMs: number): string {
  const wall = epochMs + zoneOffset(timeZone, epochMs);
  const minutes = Math.floor((wall % 86_400_000) / 300_000) * 5;
  return `${dateLabel(fromUtc(wall))}T${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}:00`;
}

/** ISO 8601 `YYYY-MM-DDThh:mmTZD` (the spec's pattern has checked the shape) → epoch ms. */
export const instant = (time: string) => Date.parse(time.replace(/Z$/, ':00Z').replace(/([+-]\d\d:\d\d)$/, ':00$1'));

/**
 * The starts (epoch ms) of `count` consecutive day, week or month buckets from the range's first
 * one (`bucketLabels`' first), with their labels: cohorts and later intervals of a retention.
 */
export function bucketStarts(timeZone: string, range: ReportRange, interval: 'day' | 'week' | 'month', count: number): { startMs: number; label: string }[] {
  const first = bucketDate(interval, range.start);
  return Array.from({ length: count }, (_, i) => {
    const date = interval === 'month' ? { year: first.year + Math.floor((first.month - 1 + i) / 12), month: ((first.month - 1 + i) % 12) + 1, day: 1 } : addDays(first, interval === 'week' ? 7 * i : i);
    return { startMs: localMidnight(timeZone, date), label: dateLabel(date) };
  });
}

/**
 * The number of the bucket that starts on a local date (`YYYY-MM-DD`) counted from 1970, as
 * `intervalNumber` of store/dialect.ts counts in SQL: days since 1970-01-01, weeks since the
 * Monday before it (1970-01-01 was a Thursday), months since January 1970.
 */
export function intervalNumberOf(label: string, interval: 'day' | 'week' | 'month'): number {
  const date = { year: Number(label.slice(0, 4)), month: Number(label.slice(5, 7)), day: Number(label.slice(8, 10)) };
  const days = asUtc(date) / 86_400_000;
  if (interval === 'month') return date.year * 12 + date.month - 1 - 1970 * 12;
  return interval === 'week' ? Math.floor((days + 3) / 7) : days;
}

/** A local date's day number (days since 1970-01-01, as `intervalNumberOf` counts days). */
export const dayNumberOf = (date: LocalDate) => asUtc(date) / 86_400_000;

/** The start (epoch ms) of the local day numbered `day` in the time zone. */
export const dayStartMs = (timeZone: string, day: number) => localMidnight(timeZone, fromUtc(day * 86_400_000));
