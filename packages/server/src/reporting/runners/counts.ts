// Aggregates of a scan per bucket and group, and over the whole range, in one pass
// (grouping sets): distinct users, events, and sums, counts, minima and maxima of a numeric
// property (the scan's last property column).
import type { EventScan } from '../query/model.js';
import { type RunnerContext, groupColumns, groupsOf } from './context.js';

export type Measure = 'uniques' | 'totals' | 'propsum' | 'propcount' | 'propmin' | 'propmax';

export interface Counts {
  perBucket: { groups: string[]; bucket: string; value: number }[];
  collapsed: { groups: string[]; value: number }[];
}

/** SQL of each measure; property measures read the numeric value of `p<last>` (non-numbers ignored). */
function aggregateSql(measure: Measure, valueColumn: string): string {
  const number = `TRY_CAST(${valueColumn} AS DOUBLE)`;
  switch (measure) {
    case 'uniques':
      return 'count(DISTINCT svc_id)';
    case 'totals':
      return 'count(*)';
    case 'propsum':
      return `coalesce(sum(${number}), 0)`;
    case 'propcount':
      return `count(${number})`;
    case 'propmin':
      return `coalesce(min(${number}), 0)`;
    case 'propmax':
      return `coalesce(max(${number}), 0)`;
  }
}

export interface CountOptions {
  /** Number of group columns among the scan's properties (the first ones); the rest are measured. */
  groupCount?: number;
  where?: string;
  /** Rolling windows: which target bucket each bucket of the scan counts towards (`(bucket, target)` pairs). */
  windows?: [string, string][];
}

export async function counts(ctx: RunnerContext, scan: EventScan, measure: Measure, options: CountOptions = {}): Promise<Counts> {
  const groups = groupColumns(options.groupCount ?? scan.properties.length);
  const aggregate = aggregateSql(measure, `p${scan.properties.length - 1}`);
  const { dialect } = ctx;
  const source = options.windows
    ? `(SELECT s.* EXCLUDE (bucket), w.target AS bucket FROM (${dialect.scan(scan)}) s JOIN (VALUES ${options.windows.map(([b, t]) => `(${dialect.bucketOf(b)}, ${dialect.bucketOf(t)})`).join(', ')}) w(bucket, target) ON s.bucket = w.bucket)`
    : `(${dialect.scan(scan)})`;
  const sets = `(${['bucket', ...groups].join(', ')}), (${groups.join(', ')})`;
  const sql = `SELECT ${dialect.bucketLabel('bucket', scan.interval!)} AS bucket, ${[...groups, 'n', 'whole'].join(', ')} FROM (SELECT ${['bucket', ...groups].join(', ')}, ${aggregate} AS n, grouping(bucket) AS whole FROM ${source} s WHERE ${options.where ?? 'true'} GROUP BY GROUPING SETS (${sets}))`;
  const result: Counts = { perBucket: [], collapsed: [] };
  // Bucket × group rows can be many (30 days × 1000 groups): read a chunk at a time.
  for await (const rows of ctx.queryChunks(sql)) {
    for (const row of rows) {
      const entry = { groups: groupsOf(row, groups.length), value: row.n as number };
      if (row.whole) result.collapsed.push(entry);
      else result.perBucket.push({ ...entry, bucket: row.bucket as string });
    }
  }
  return result;
}
