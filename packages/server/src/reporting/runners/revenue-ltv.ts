// `/api/2/revenue/ltv`: new users in the cohort of the day, week or month of their first event
// ever, and the revenue they brought in their first N days. Two statements on either engine:
// the cohorts' sizes, and per cohort the revenue and paying users of each window and so far.
// Each user's days are counted from the day of their first event (`intervalNumber` by day,
// the same arithmetic on both engines); which windows have ended is decided here.
import { NONE, type PropertyRef, type Segment } from '../../model/query.js';
import { bucketLabels, bucketStarts, dayNumberOf, dayStartMs, intervalNumberOf, type ReportRange } from '../../model/time.js';
import { intervalNumber } from '../../store/dialect.js';
import { compareText, type RunnerContext } from './context.js';

/** The windows the platform answers, in days from each user's first day (`r1d` … `r90d`). */
export const LTV_WINDOWS = [1, 2, 3, 4, 5, 6, 7, 14, 30, 60, 90] as const;

export type LtvInterval = 'day' | 'week' | 'month';

export interface LtvQuery {
  range: ReportRange;
  interval: LtvInterval;
  /** Applies to each user's first event (who is in a cohort). */
  segment: Segment;
  /** The user's value at their first event. */
  groupBy?: PropertyRef;
  limit: number;
}

export interface LtvWindow {
  days: number;
  revenue: number;
  payingUsers: number;
}

export interface LtvCohort {
  /** The cohort's first day, `YYYY-MM-DD`. */
  label: string;
  users: number;
  /** Users with a revenue event so far, and their revenue. */
  paid: number;
  totalAmount: number;
  /** The windows that have ended for every user of the cohort, shortest first. */
  windows: LtvWindow[];
}

export interface LtvGroup {
  /** `(none)` for a missing value; '' when not grouped. */
  groupValue: string;
  users: number;
  /** Oldest first, one per bucket of the range. */
  cohorts: LtvCohort[];
}

interface Sums {
  paid: number;
  totalAmount: number;
  revenue: number[];
  payingUsers: number[];
}

export async function revenueLtv(ctx: RunnerContext, query: LtvQuery): Promise<LtvGroup[]> {
  const labels = bucketLabels(query.range, query.interval);
  const first = intervalNumberOf(labels[0]!, query.interval);
  const now = ctx.now();
  // Revenue counts up to now: none when the range starts later.
  const [sizeRows, sumRows] = await Promise.all([ctx.query(sizesSql(ctx, query)), now > query.range.startMs ? ctx.query(revenueSql(ctx, query, now)) : []]);
  const groups = new Map<string, { sizes: number[]; sums: (Sums | undefined)[] }>();
  const groupOf = (value: string) => {
    let group = groups.get(value);
    if (!group) groups.set(value, (group = { sizes: labels.map(() => 0), sums: labels.map(() => undefined) }));
    return group;
  };
  for (const row of sizeRows) {
    const cohort = Number(row.ci) - first;
    if (cohort >= 0 && cohort < labels.length) groupOf(String(row.g)).sizes[cohort] = Number(row.users);
  }
  for (const row of sumRows) {
    const cohort = Number(row.ci) - first;
    if (cohort < 0 || cohort >= labels.length) continue;
    groupOf(String(row.g)).sums[cohort] = {
      paid: Number(row.paid),
      totalAmount: Number(row.total_amount),
      revenue: LTV_WINDOWS.map((_, j) => Number(row[`a${j}`] ?? 0)),
      payingUsers: LTV_WINDOWS.map((_, j) => Number(row[`p${j}`] ?? 0)),
    };
  }
  if (!query.groupBy && groups.size === 0) groupOf('');
  const last = lastDays(ctx.timeZone, query.range, query.interval, labels.length);
  const result = [...groups].map(([groupValue, { sizes, sums }]): LtvGroup => ({
    groupValue,
    users: sizes.reduce((a, b) => a + b, 0),
    cohorts: labels.map((label, c) => {
      const sum = sums[c];
      // A window has ended for every user once the N-th day after the cohort's last day has begun.
      const ended = LTV_WINDOWS.flatMap((days, j) => (dayStartMs(ctx.timeZone, last[c]! + days) <= now ? [j] : []));
      return {
        label,
        users: sizes[c]!,
        paid: sum?.paid ?? 0,
        totalAmount: sum?.totalAmount ?? 0,
        windows: ended.map((j) => ({ days: LTV_WINDOWS[j]!, revenue: sum?.revenue[j] ?? 0, payingUsers: sum?.payingUsers[j] ?? 0 })),
      };
    }),
  }));
  const ranked = result.sort((a, b) => b.users - a.users || compareText(a.groupValue, b.groupValue));
  return query.groupBy ? ranked.slice(0, query.limit) : ranked;
}

/** Per cohort, the day number of its last day: the bucket's, or the range's last when earlier. */
function lastDays(timeZone: string, range: ReportRange, interval: LtvInterval, count: number): number[] {
  return bucketStarts(timeZone, range, interval, count + 1)
    .slice(1)
    .map((next) => Math.min(intervalNumberOf(next.label, 'day') - 1, dayNumberOf(range.end)));
}

/** Each user's first event in the range (new users) as `svc_id, g, ci, d0`: group value, cohort number, day number. */
function cohortsSql(ctx: RunnerContext, query: LtvQuery): string {
  const { dialect } = ctx;
  const { range } = query;
  const scan = dialect.scan({ appId: ctx.appId, timeZone: ctx.timeZone, range, firstEventsOnly: true, segment: query.segment, properties: query.groupBy ? [query.groupBy] : [] });
  const number = (interval: LtvInterval) => dialect.integer(intervalNumber(dialect, interval, ctx.timeZone, 't0', range.startMs, range.endMs));
  // The group value at the first event (the first ingested of equal times); missing is `(none)`.
  const group = query.groupBy ? dialect.valueAtMax(`coalesce(p0, ${dialect.string(NONE)})`, dialect.timeOrderKey('(-time)', '(-ingest_seq)')) : dialect.string('');
  return `SELECT svc_id, g, ${number(query.interval)} AS ci, ${number('day')} AS d0 FROM (SELECT svc_id, min(time) AS t0, ${group} AS g FROM (${scan}) GROUP BY svc_id)`;
}

function sizesSql(ctx: RunnerContext, query: LtvQuery): string {
  return `SELECT g, ci, ${ctx.dialect.integer('count(*)')} AS users FROM (${cohortsSql(ctx, query)}) GROUP BY g, ci`;
}

/**
 * Rows `g, ci, paid, total_amount, a<j>, p<j>`: per cohort, its paying users and their revenue up
 * to `untilMs`, and per window j the revenue of the users' first N days and the users who paid in them.
 */
function revenueSql(ctx: RunnerContext, query: LtvQuery, untilMs: number): string {
  const { dialect } = ctx;
  const range = { ...query.range, endMs: untilMs };
  const scan = dialect.scan({ appId: ctx.appId, timeZone: ctx.timeZone, range, selector: { eventType: 'revenue_amount', conditions: [] }, segment: [], properties: [], revenue: true });
  const day = dialect.integer(intervalNumber(dialect, 'day', ctx.timeZone, 'time', range.startMs, range.endMs));
  const perDay = `SELECT svc_id, k, sum(revenue) AS amount FROM (SELECT svc_id, revenue, ${day} AS k FROM (${scan})) GROUP BY svc_id, k`;
  const pairs = `SELECT svc_id, g, ci, k - d0 AS n, amount FROM ${dialect.innerJoin(cohortsSql(ctx, query), perDay, ['svc_id'])}`;
  const windows = LTV_WINDOWS.map((days, j) => `sum(CASE WHEN n < ${days} THEN amount ELSE 0 END) AS a${j}`);
  const perUser = `SELECT svc_id, g, ci, sum(amount) AS total, min(n) AS first_n, ${windows.join(', ')} FROM (${pairs}) GROUP BY svc_id, g, ci`;
  const sums = LTV_WINDOWS.map((days, j) => `sum(a${j}) AS a${j}, ${dialect.integer(dialect.countWhere(`first_n < ${days}`))} AS p${j}`);
  return `SELECT g, ci, ${dialect.integer('count(*)')} AS paid, sum(total) AS total_amount, ${sums.join(', ')} FROM (${perUser}) GROUP BY g, ci`;
}
