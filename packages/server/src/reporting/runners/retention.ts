// `/api/2/retention`: users in the cohort of the day, week or month of their first start event
// in the range, and which of them did the return event how many intervals later. One statement
// on either engine, aggregated per group, cohort and column; the columns' counts (rolling: "in
// that interval or a later one") and what is complete are made here. Intervals are numbered in
// the SQL by `intervalNumber` (store/dialect.ts), the same arithmetic on both engines.
import { type EventSelector, NONE, type PropertyRef, type Segment } from '../../model/query.js';
import { bucketLabels, bucketStarts, intervalNumberOf, type ReportRange } from '../../model/time.js';
import { intervalNumber } from '../../store/dialect.js';
import { compareText, type RunnerContext } from './context.js';

export type RetentionMode = 'nday' | 'rolling' | 'bracket';
export type RetentionInterval = 'day' | 'week' | 'month';

export interface RetentionQuery {
  range: ReportRange;
  interval: RetentionInterval;
  /** The start event; `new`: each user's first event ever. */
  start: EventSelector | 'new';
  returning: EventSelector;
  mode: RetentionMode;
  /** Bracket mode: `[from, to)` in intervals after the start's, ascending and apart. */
  brackets: [number, number][];
  /** Applies to the start events (who is in a cohort), not to the return events. */
  segment: Segment;
  /** The user's value at their first start event in the range. */
  groupBy?: PropertyRef;
  limit: number;
}

export interface RetentionCell {
  count: number;
  outof: number;
  incomplete: boolean;
}

export interface RetentionCohort {
  /** The cohort's bucket, `YYYY-MM-DD` (its first day). */
  label: string;
  /** Index 0: the cohort's users; index j + 1: column j (interval j after the start's, or bracket j). */
  cells: RetentionCell[];
}

export interface RetentionGroup {
  /** `(none)` for a missing value; '' when not grouped. */
  groupValue: string;
  users: number;
  /** Oldest first, one per bucket of the range. */
  cohorts: RetentionCohort[];
}

interface Counts {
  sizes: number[];
  /** Per cohort, users per column (rolling: per latest return interval, summed later). */
  columns: Map<number, number>[];
}

export async function retention(ctx: RunnerContext, query: RetentionQuery): Promise<RetentionGroup[]> {
  const labels = bucketLabels(query.range, query.interval);
  const last = labels.length - 1;
  const bracket = query.mode === 'bracket';
  // The furthest interval after the start's that any column reads.
  const reach = bracket ? Math.max(...query.brackets.map(([, to]) => to)) - 1 : last;
  const starts = bucketStarts(ctx.timeZone, query.range, query.interval, last + reach + 2);
  const first = intervalNumberOf(labels[0]!, query.interval);
  const groups = new Map<string, Counts>();
  for (const row of await ctx.query(retentionSql(ctx, query, reach, starts[last + reach + 1]!.startMs))) {
    const cohort = Number(row.ci) - first;
    if (cohort < 0 || cohort > last) continue;
    const value = String(row.g);
    let counts = groups.get(value);
    if (!counts) groups.set(value, (counts = { sizes: labels.map(() => 0), columns: labels.map(() => new Map()) }));
    if (Number(row.col) < 0) counts.sizes[cohort] = Number(row.users);
    else counts.columns[cohort]!.set(Number(row.col), Number(row.users));
  }
  if (!query.groupBy && groups.size === 0) groups.set('', { sizes: labels.map(() => 0), columns: labels.map(() => new Map()) });
  const now = ctx.now();
  // A column is left out when its first interval starts after now, incomplete until its last one ends.
  const cell = (count: number, outof: number, endIndex: number): RetentionCell => ({ count, outof, incomplete: starts[endIndex]!.startMs > now });
  const spans: [number, number][] = bracket ? query.brackets : labels.map((_, j) => [j, j + 1]);
  const result = [...groups].map(([groupValue, counts]): RetentionGroup => ({
    groupValue,
    users: counts.sizes.reduce((a, b) => a + b, 0),
    cohorts: labels.map((label, c) => {
      const size = counts.sizes[c]!;
      const shown = spans.filter(([from]) => starts[c + from]!.startMs <= now);
      const retained = columnCounts(query.mode, counts.columns[c]!, shown.length);
      const columns = shown.map(([, to], j) => cell(retained[j]!, size, c + to));
      return { label, cells: [cell(size, size, c + 1), ...columns] };
    }),
  }));
  const ranked = result.sort((a, b) => b.users - a.users || compareText(a.groupValue, b.groupValue));
  return query.groupBy ? ranked.slice(0, query.limit) : ranked;
}

/** Users per column: n-day and bracket as counted; rolling, those whose latest return is that interval or a later one. */
function columnCounts(mode: RetentionMode, columns: Map<number, number>, count: number): number[] {
  const counted = Array.from({ length: count }, (_, j) => columns.get(j) ?? 0);
  if (mode !== 'rolling') return counted;
  // Latest returns beyond the columns shown (after now) still count in every column.
  let later = 0;
  for (const [latest, users] of columns) if (latest >= count) later += users;
  for (let j = count - 1; j >= 0; j--) counted[j] = later += counted[j]!;
  return counted;
}

/**
 * Rows `g, ci, col, users`: the cohort sizes (`col` -1) and per column the users retained, per
 * group value `g` and cohort interval number `ci`. Each user's first start event in the range
 * makes the cohort; return events count from that event's time on (the start event itself when
 * it is also a return event), per interval `k`, `n` = k - ci intervals after the start's.
 */
function retentionSql(ctx: RunnerContext, query: RetentionQuery, reach: number, horizonMs: number): string {
  const { dialect } = ctx;
  const { range, interval } = query;
  const number = (time: string, endMs: number) => dialect.integer(intervalNumber(dialect, interval, ctx.timeZone, time, range.startMs, endMs));
  const scanned = { appId: ctx.appId, timeZone: ctx.timeZone };
  const startScan = dialect.scan({ ...scanned, range, ...(query.start === 'new' ? { firstEventsOnly: true } : { selector: query.start }), segment: query.segment, properties: query.groupBy ? [query.groupBy] : [] });
  // Return events may come up to `reach` intervals after the last cohort's.
  const returnScan = dialect.scan({ ...scanned, range: { ...range, endMs: horizonMs }, selector: query.returning, segment: [], properties: [] });
  // The group value at the first start event (the earliest, then the first ingested); missing is `(none)`.
  const group = query.groupBy ? dialect.valueAtMax(`coalesce(p0, ${dialect.string(NONE)})`, dialect.timeOrderKey('(-time)', '(-ingest_seq)')) : dialect.string('');
  const cohorts = `SELECT svc_id, t0, g, ${number('t0', range.endMs)} AS ci FROM (SELECT svc_id, min(time) AS t0, ${group} AS g FROM (${startScan}) GROUP BY svc_id)`;
  // Per user and interval the latest return: one at or after the start in the start's interval is its latest.
  const returns = `SELECT svc_id, k, max(time) AS last_time FROM (SELECT svc_id, time, ${number('time', horizonMs)} AS k FROM (${returnScan})) GROUP BY svc_id, k`;
  const integer = (sql: string) => dialect.integer(sql);
  // The cohorts are read twice: their sizes, and joined to the returns.
  return dialect.shared('cohorts', cohorts, (relation) => {
    const pairs = `SELECT svc_id, g, ci, k - ci AS n FROM ${dialect.innerJoin(`SELECT * FROM ${relation}`, returns, ['svc_id'])} WHERE last_time >= t0 AND k - ci <= ${reach}`;
    const sizes = `SELECT g, ci, ${integer('-1')} AS col, ${integer('count(*)')} AS users FROM ${relation} GROUP BY g, ci`;
    return `SELECT * FROM (${sizes} UNION ALL ${retained(query, pairs, integer, dialect.distinctCount('svc_id'))})`;
  });
}

/** Rows `g, ci, col, users` of the users retained per column, from the `pairs` of users and intervals `n` after their start's. */
function retained(query: RetentionQuery, pairs: string, integer: (sql: string) => string, distinctUsers: string): string {
  switch (query.mode) {
    case 'nday':
      return `SELECT g, ci, ${integer('n')} AS col, ${integer('count(*)')} AS users FROM (${pairs}) GROUP BY g, ci, n`;
    case 'rolling':
      return `SELECT g, ci, ${integer('m')} AS col, ${integer('count(*)')} AS users FROM (SELECT svc_id, g, ci, max(n) AS m FROM (${pairs}) GROUP BY svc_id, g, ci) GROUP BY g, ci, m`;
    case 'bracket': {
      const ofBracket = `CASE ${query.brackets.map(([from, to], b) => `WHEN n >= ${from} AND n < ${to} THEN ${b}`).join(' ')} ELSE -1 END`;
      return `SELECT g, ci, ${integer('b')} AS col, ${integer(distinctUsers)} AS users FROM (SELECT svc_id, g, ci, ${ofBracket} AS b FROM (${pairs})) WHERE b >= 0 GROUP BY g, ci, b`;
    }
  }
}
