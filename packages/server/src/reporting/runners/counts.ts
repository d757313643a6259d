// Aggregates of a scan per bucket and group, and over the whole range: distinct users, events, and sums, counts, minima and maxima of a numeric
// property (the scan's last property column).
import type { Aggregate, RollingWindows } from '../../store/dialect.js';
import type { EventScan } from '../../model/query.js';
import { bucketLabels } from '../../model/time.js';
import { type RunnerContext, groupColumns, groupsOf } from './context.js';

export type Measure = 'uniques' | 'totals' | 'propsum' | 'propcount' | 'propmin' | 'propmax';

export interface Counts {
  perBucket: { groups: string[]; bucket: string; value: number }[];
  collapsed: { groups: string[]; value: number }[];
}

/** The aggregate of each measure; property measures read the numeric value of `valueColumn` (non-numbers ignored). */
function aggregateOf(measure: Measure, valueColumn: string): Aggregate {
  switch (measure) {
    case 'uniques':
      return { kind: 'distinct', column: 'svc_id' };
    case 'totals':
      return { kind: 'count' };
    case 'propsum':
      return { kind: 'sum', column: valueColumn, numeric: true };
    case 'propcount':
      return { kind: 'count', column: valueColumn, numeric: true };
    case 'propmin':
      return { kind: 'min', column: valueColumn, numeric: true };
    case 'propmax':
      return { kind: 'max', column: valueColumn, numeric: true };
  }
}

export interface CountOptions {
  /** Number of group columns among the scan's properties (the first ones); the rest are measured. */
  groupCount?: number;
  where?: string;
  /** Rolling windows: each bucket of the scan counts towards the windows that hold it. */
  windows?: RollingWindows;
  /** Only the `onlyTop` groups with the most over the range are answered: the others' per-bucket values may be left out. */
  onlyTop?: number;
}

export async function counts(ctx: RunnerContext, scan: EventScan, measure: Measure, options: CountOptions = {}): Promise<Counts> {
  const fromTimelines = await timelineCountsOf(ctx, scan, measure, options);
  if (fromTimelines) return fromTimelines;
  const groups = groupColumns(options.groupCount ?? scan.properties.length);
  const { dialect } = ctx;
  const aggregate = aggregateOf(measure, `p${scan.properties.length - 1}`);
  const sql = dialect.scan(scan);
  const source = `(${options.windows ? dialect.rebucketed(scan, sql, options.windows) : sql})`;
  const query = dialect.perBucketAndWhole({ source, interval: scan.interval!, groups, aggregates: { n: aggregate }, where: options.where, onlyTop: options.onlyTop === undefined ? undefined : { column: 'n', count: options.onlyTop } });
  const result: Counts = { perBucket: [], collapsed: [] };
  // Bucket × group rows can be many (30 days × 1000 groups): read a chunk at a time.
  for await (const rows of ctx.queryChunks(query)) {
    for (const row of rows) {
      const entry = { groups: groupsOf(row, groups.length), value: row.n as number };
      if (row.whole) result.collapsed.push(entry);
      else result.perBucket.push({ ...entry, bucket: row.bucket as string });
    }
  }
  return result;
}

/**
 * Distinct users or events of a plain scan (one event type, `_all` or `_active`; no properties,
 * segment, conditions, windows or other filter; day, week or month buckets; no user mappings)
 * from the engine's per-user timelines; undefined when not eligible or when the engine has none
 * ready (the SQL answers).
 */
async function timelineCountsOf(ctx: RunnerContext, scan: EventScan, measure: Measure, options: CountOptions): Promise<Counts | undefined> {
  const { selector, interval } = scan;
  const plainSelector = !selector || (selector.conditions.length === 0 && selector.eventType !== 'revenue_amount');
  const plainScan = scan.properties.length === 0 && scan.segment.length === 0 && !scan.flags && (scan.timeColumn ?? 'time') === 'time';
  if (!ctx.timelineCounts || (measure !== 'uniques' && measure !== 'totals') || !plainSelector || !plainScan || options.windows || options.where || ctx.dialect.mapsUsers) return undefined;
  if (interval !== 'day' && interval !== 'week' && interval !== 'month') return undefined;
  const answer = await ctx.timelineCounts({
    appId: ctx.appId,
    timeZone: ctx.timeZone,
    range: scan.range,
    interval,
    eventType: selector?.eventType ?? '_all',
    measure,
    firstEventsOnly: scan.firstEventsOnly ?? false,
  });
  if (!answer) return undefined;
  // As the SQL: rows of the buckets that have any, and the row over the range.
  const perBucket = bucketLabels(scan.range, interval).flatMap((bucket, i) => (answer.perBucket[i]! > 0 ? [{ groups: [], bucket, value: answer.perBucket[i]! }] : []));
  return { perBucket, collapsed: [{ groups: [], value: answer.whole }] };
}
