// `/api/2/events/segmentation`: one or two events (`e`, `e2`) counted per bucket, one series
// per event and group-by values (the `limit` groups with the most of the metric over the range).
import type { Condition, EventSelector, PropertyRef } from '../query/model.js';
import { bucketLabels, type Interval, type ReportRange } from '../time.js';
import { type RunnerContext, type Series, type SeriesResult, alignSeries } from './context.js';
import { type Counts, counts } from './counts.js';

export type SegmentationMetric = 'uniques' | 'totals' | 'pct_dau' | 'average';

export interface SegmentationQuery {
  range: ReportRange;
  interval: Interval;
  events: EventSelector[];
  groupBy: PropertyRef[];
  segment: Condition[];
  metric: SegmentationMetric;
  limit: number;
}

const key = (groups: string[], bucket?: string) => JSON.stringify([groups, bucket ?? null]);

/** a ÷ b per bucket and group (0 where b is 0). */
function ratio(a: Counts, b: Counts, denominatorGroups: (groups: string[]) => string[]): Counts {
  const lookup = new Map([...b.perBucket.map((r) => [key(r.groups, r.bucket), r.value] as const), ...b.collapsed.map((r) => [key(r.groups), r.value] as const)]);
  const divide = (value: number, k: string) => {
    const by = lookup.get(k) ?? 0;
    return by === 0 ? 0 : value / by;
  };
  return {
    perBucket: a.perBucket.map((r) => ({ ...r, value: divide(r.value, key(denominatorGroups(r.groups), r.bucket)) })),
    collapsed: a.collapsed.map((r) => ({ ...r, value: divide(r.value, key(denominatorGroups(r.groups))) })),
  };
}

export async function segmentation(ctx: RunnerContext, query: SegmentationQuery): Promise<SeriesResult> {
  const xValues = bucketLabels(query.range, query.interval);
  const base = { appId: ctx.appId, timeZone: ctx.timeZone, range: query.range, segment: query.segment, interval: query.interval };
  const series: Series[] = [];
  for (const [eventIndex, selector] of query.events.entries()) {
    const scan = { ...base, selector, properties: query.groupBy };
    let values: Counts;
    switch (query.metric) {
      case 'uniques':
      case 'totals':
        values = await counts(ctx, scan, query.metric);
        break;
      case 'average':
        values = ratio(await counts(ctx, scan, 'totals'), await counts(ctx, scan, 'uniques'), (groups) => groups);
        break;
      case 'pct_dau': {
        const active = await counts(ctx, { ...base, selector: { eventType: '_active', conditions: [] }, properties: [] }, 'uniques');
        values = ratio(await counts(ctx, scan, 'uniques'), active, () => []);
        break;
      }
    }
    series.push(...alignSeries(xValues, values.perBucket, values.collapsed, { eventIndex, segmentIndex: 0, limit: query.limit, grouped: query.groupBy.length > 0 }));
  }
  return { xValues, series };
}
