/**
 * Independent test oracle of `/api/2/revenue/ltv`: plain TypeScript over the resolved events
 * (oracle.ts), following the operation's description in the spec. Written for obviousness,
 * not speed: each user's events are walked, days are counted on local dates.
 */
import { bucketOf, byTime, inRange, intervalOfDays, isoDate, localParts, NONE, type Oracle, passesSegment, propertyValues, type ResolvedEvent, type Segment, xValuesOf } from './oracle.js';

export interface LtvParams {
  start: string;
  end: string;
  m?: 0 | 1 | 2 | 3;
  i?: 1 | 7 | 30;
  s?: Segment[];
  g?: string;
  limit?: number;
}

const DAY_MS = 86_400_000;
const WINDOWS = [1, 2, 3, 4, 5, 6, 7, 14, 30, 60, 90];

/** Days since 1970 of a local date `YYYY-MM-DD`. */
const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;

/** What ingestion stores as an event's revenue: price × quantity, else revenue, else `$revenue`. */
function revenueOf({ event }: ResolvedEvent): number | undefined {
  const properties = event.event_properties ?? {};
  const price = event.price ?? (typeof properties.$price === 'number' ? properties.$price : undefined);
  if (price !== undefined) return price * (event.quantity ?? 1);
  return event.revenue ?? (typeof properties.$revenue === 'number' ? properties.$revenue : undefined);
}

const rounded = (value: number) => Math.round(value * 1e6) / 1e6 || 0;

interface Cohort { users: number; paid: number; total: number; revenue: number[]; paying: number[] }

export function revenueLtv(oracle: Oracle, params: LtvParams, now: number) {
  const range = { start: params.start, end: params.end, timeZone: oracle.timeZone };
  const interval = intervalOfDays(params.i ?? 1);
  const buckets = xValuesOf(range, interval);
  const local = (ms: number) => localParts(ms, oracle.timeZone).date;
  const byUser = new Map<number, ResolvedEvent[]>();
  for (const r of [...oracle.events].sort(byTime)) byUser.set(r.svcId, [...(byUser.get(r.svcId) ?? []), r]);

  const groups = new Map<string, Map<string, Cohort>>();
  for (const events of byUser.values()) {
    const first = events[0]!;
    if (!inRange(first.event.time, range) || !passesSegment(first, params.s)) continue;
    const value = params.g === undefined ? '' : (propertyValues(first, { type: 'user', key: params.g })[0] ?? NONE);
    const cohorts = groups.get(value) ?? new Map<string, Cohort>();
    groups.set(value, cohorts);
    const label = bucketOf(first.event.time, oracle.timeZone, interval);
    const cohort = cohorts.get(label) ?? { users: 0, paid: 0, total: 0, revenue: WINDOWS.map(() => 0), paying: WINDOWS.map(() => 0) };
    cohorts.set(label, cohort);
    cohort.users++;
    const purchases = events.flatMap((r) => {
      const revenue = revenueOf(r);
      return revenue === undefined || r.event.time >= now ? [] : [{ revenue, day: dayNumber(local(r.event.time)) - dayNumber(local(first.event.time)) }];
    });
    if (purchases.length === 0) continue;
    cohort.paid++;
    cohort.total += purchases.reduce((sum, p) => sum + p.revenue, 0);
    WINDOWS.forEach((days, j) => {
      const within = purchases.filter((p) => p.day < days);
      cohort.revenue[j]! += within.reduce((sum, p) => sum + p.revenue, 0);
      if (within.length > 0) cohort.paying[j]!++;
    });
  }
  if (params.g === undefined && groups.size === 0) groups.set('', new Map());

  const users = (cohorts: Map<string, Cohort>) => [...cohorts.values()].reduce((sum, c) => sum + c.users, 0);
  const ordered = [...groups].sort(([a, x], [b, y]) => users(y) - users(x) || (a < b ? -1 : a > b ? 1 : 0)).slice(0, params.g === undefined ? undefined : (params.limit ?? 100));
  const today = dayNumber(local(now));
  const endDay = dayNumber(isoDate(params.end));
  const series = ordered.map(([, cohorts]) => {
    const values: Record<string, Record<string, number>> = {};
    buckets.forEach((label, b) => {
      const cohort = cohorts.get(label) ?? { users: 0, paid: 0, total: 0, revenue: WINDOWS.map(() => 0), paying: WINDOWS.map(() => 0) };
      // The cohort's last day: the day before the next cohort's, or the range's last.
      const lastDay = b + 1 < buckets.length ? dayNumber(buckets[b + 1]!) - 1 : endDay;
      const entry: Record<string, number> = {};
      WINDOWS.forEach((days, j) => {
        if (today < lastDay + days) return;
        const metric = [
          cohort.users === 0 ? 0 : cohort.revenue[j]! / cohort.users,
          cohort.paying[j] === 0 ? 0 : cohort.revenue[j]! / cohort.paying[j]!,
          cohort.revenue[j]!,
          cohort.paying[j]!,
        ][params.m ?? 0]!;
        entry[`r${days}d`] = rounded(metric);
      });
      values[label] = { ...entry, count: cohort.users, paid: cohort.paid, total_amount: rounded(cohort.total) };
    });
    return { dates: [...buckets].reverse(), values };
  });
  return { seriesLabels: ordered.map(([value]) => value), series };
}
