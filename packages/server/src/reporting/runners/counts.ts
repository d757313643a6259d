// Distinct users or events of a scan per bucket and group, and over the whole range, in one
// pass (grouping sets).
import type { EventScan } from '../query/model.js';
import { type RunnerContext, groupColumns, groupsOf } from './context.js';

export type Count = 'uniques' | 'totals';

export interface Counts {
  perBucket: { groups: string[]; bucket: string; value: number }[];
  collapsed: { groups: string[]; value: number }[];
}

export async function counts(ctx: RunnerContext, scan: EventScan, count: Count, where = 'true'): Promise<Counts> {
  const groups = groupColumns(scan.properties.length);
  const aggregate = count === 'uniques' ? 'count(DISTINCT svc_id)' : 'count(*)';
  const sets = `(${['bucket', ...groups].join(', ')}), (${groups.join(', ')})`;
  const rows = await ctx.query(
    `WITH s AS (${ctx.dialect.scan(scan)}) SELECT ${['bucket', ...groups].join(', ')}, ${aggregate} AS n, grouping(bucket) AS whole FROM s WHERE ${where} GROUP BY GROUPING SETS (${sets})`,
  );
  const result: Counts = { perBucket: [], collapsed: [] };
  for (const row of rows) {
    const entry = { groups: groupsOf(row, groups.length), value: row.n as number };
    if (row.whole) result.collapsed.push(entry);
    else result.perBucket.push({ ...entry, bucket: row.bucket as string });
  }
  return result;
}
