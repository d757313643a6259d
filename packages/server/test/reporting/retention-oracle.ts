/**
 * Independent test oracle of `/api/2/retention`: plain TypeScript over the resolved events
 * (oracle.ts), following the operation's description in the spec. Written for obviousness,
 * not speed: each user's events are walked, intervals are counted on bucket labels.
 */
import {
  bucketOf, byTime, type EventSpec, inRange, type Interval, intervalOfDays, matchesEventSpec, NONE, type Oracle, passesSegment,
  propertyValues, type Segment, xValuesOf,
} from './oracle.js';

export interface RetentionParams {
  start: string;
  end: string;
  se: EventSpec;
  re: EventSpec;
  rm?: 'nday' | 'n-day' | 'rolling' | 'bracket';
  rb?: [number, number][];
  i?: 1 | 7 | 30;
  s?: Segment[];
  g?: string;
  limit?: number;
}

const DAY_MS = 86_400_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The label `n` intervals after a bucket's label. */
function later(label: string, n: number, interval: Interval): string {
  if (interval !== 'monthly') return new Date(Date.parse(`${label}T00:00:00Z`) + n * (interval === 'weekly' ? 7 : 1) * DAY_MS).toISOString().slice(0, 10);
  const months = Number(label.slice(0, 4)) * 12 + Number(label.slice(5, 7)) - 1 + n;
  return `${Math.floor(months / 12)}-${String((months % 12) + 1).padStart(2, '0')}-01`;
}

/** How many intervals `to` is after `from` (both bucket labels). */
function between(from: string, to: string, interval: Interval): number {
  if (interval === 'monthly') return (Number(to.slice(0, 4)) - Number(from.slice(0, 4))) * 12 + Number(to.slice(5, 7)) - Number(from.slice(5, 7));
  return Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS) / (interval === 'weekly' ? 7 : 1);
}

function labelOf(bucket: string, interval: Interval, withYear: boolean): string {
  const month = MONTHS[Number(bucket.slice(5, 7)) - 1]!;
  if (interval === 'monthly') return `${month} ${bucket.slice(0, 4)}`;
  return `${month} ${bucket.slice(8, 10)}${withYear ? `, ${bucket.slice(0, 4)}` : ''}`;
}

interface Cell { count: number; outof: number; incomplete: boolean }

export function retention(oracle: Oracle, params: RetentionParams, now: number) {
  const range = { start: params.start, end: params.end, timeZone: oracle.timeZone };
  const interval = intervalOfDays(params.i ?? 1);
  const buckets = xValuesOf(range, interval);
  const nowBucket = bucketOf(now, oracle.timeZone, interval);
  const mode = params.rm === 'rolling' || params.rm === 'bracket' ? params.rm : 'nday';
  // Columns as [from, to) intervals after the start's.
  const spans: [number, number][] = mode === 'bracket' ? params.rb! : buckets.map((_, j) => [j, j + 1]);
  const byUser = new Map<number, typeof oracle.events>();
  for (const r of [...oracle.events].sort(byTime)) byUser.set(r.svcId, [...(byUser.get(r.svcId) ?? []), r]);
  const firstEver = new Map([...byUser].map(([svcId, events]) => [svcId, events[0]!.event.time]));

  // Per group value, per cohort bucket: the users and, per column, the users retained.
  const groups = new Map<string, Map<string, { users: number; retained: number[] }>>();
  for (const [svcId, events] of byUser) {
    const isStart = (r: (typeof events)[number]) =>
      inRange(r.event.time, range) && passesSegment(r, params.s) && (params.se.event_type === '_new' ? r.event.time === firstEver.get(svcId) : matchesEventSpec(r, params.se));
    const start = events.find(isStart);
    if (!start) continue;
    const cohort = bucketOf(start.event.time, oracle.timeZone, interval);
    const returns = events.filter((r) => r.event.time >= start.event.time && matchesEventSpec(r, params.re)).map((r) => between(cohort, bucketOf(r.event.time, oracle.timeZone, interval), interval));
    const value = params.g === undefined ? '' : (propertyValues(start, { type: 'user', key: params.g })[0] ?? NONE);
    const cohorts = groups.get(value) ?? new Map();
    groups.set(value, cohorts);
    const row = cohorts.get(cohort) ?? { users: 0, retained: spans.map(() => 0) };
    cohorts.set(cohort, row);
    row.users++;
    // Rolling: in interval `from` or a later one up to the last column.
    const last = buckets.length - 1;
    spans.forEach(([from, to], j) => {
      if (returns.some((n) => (mode === 'rolling' ? n >= from && n <= last : n >= from && n < to))) row.retained[j]!++;
    });
  }
  if (params.g === undefined && groups.size === 0) groups.set('', new Map());

  const total = (cohorts: Map<string, { users: number }>) => [...cohorts.values()].reduce((sum, row) => sum + row.users, 0);
  const ordered = [...groups].sort(([a, x], [b, y]) => total(y) - total(x) || (a < b ? -1 : a > b ? 1 : 0)).slice(0, params.g === undefined ? undefined : (params.limit ?? 100));
  const withYear = interval !== 'monthly' && new Set(buckets.map((b) => b.slice(0, 4))).size > 1;
  const series = ordered.map(([, cohorts]) => {
    const values: Record<string, Cell[]> = {};
    const arrays = buckets.map((bucket) => {
      const row = cohorts.get(bucket) ?? { users: 0, retained: spans.map(() => 0) };
      const cells: Cell[] = [{ count: row.users, outof: row.users, incomplete: nowBucket <= bucket }];
      spans.forEach(([from, to], j) => {
        if (later(bucket, from, interval) > nowBucket) return;
        cells.push({ count: row.retained[j]!, outof: row.users, incomplete: nowBucket <= later(bucket, to - 1, interval) });
      });
      values[labelOf(bucket, interval, withYear)] = cells;
      return cells;
    });
    const combined = Array.from({ length: Math.max(...arrays.map((a) => a.length)) }, (_, j) => {
      const cells = arrays.filter((a) => a.length > j).map((a) => a[j]!);
      return { count: cells.reduce((s, c) => s + c.count, 0), outof: cells.reduce((s, c) => s + c.outof, 0), retainedSetId: null, incomplete: cells.some((c) => c.incomplete) };
    });
    return { dates: buckets.map((b) => labelOf(b, interval, withYear)).reverse(), values, combined };
  });
  return {
    series,
    seriesMeta: series.map(() => ({ segmentIndex: 0, eventIndex: 0 })),
    seriesLabels: ordered.map(([value]) => (params.g === undefined ? 0 : value)),
  };
}
