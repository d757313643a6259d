// `/api/2/users`: active users (≥1 active event) or new users (first event ever) per day,
// week or month, for one segment, one series per value of `g`.
import type { PropertyRef, Segment } from '../../model/query.js';
import { bucketLabels, type Interval, type ReportRange } from '../../model/time.js';
import { type RunnerContext, type SeriesResult, alignSeries } from './context.js';
import { counts } from './counts.js';

export interface UserCountsQuery {
  range: ReportRange;
  metric: 'active' | 'new';
  interval: Interval;
  segment: Segment;
  groupBy?: PropertyRef;
}

/** Groups beyond this many are left out (largest first); the operation documents no `limit`. */
const MAX_GROUPS = 1000;

export async function userCounts(ctx: RunnerContext, query: UserCountsQuery): Promise<SeriesResult> {
  const xValues = bucketLabels(query.range, query.interval);
  const scan = {
    appId: ctx.appId,
    timeZone: ctx.timeZone,
    range: query.range,
    // New users: their first events, of any type.
    ...(query.metric === 'active' ? { selector: { eventType: '_active', conditions: [] } } : { firstEventsOnly: true }),
    segment: query.segment,
    properties: query.groupBy ? [query.groupBy] : [],
    interval: query.interval,
  };
  const { perBucket, collapsed } = await counts(ctx, scan, 'uniques');
  return { xValues, series: alignSeries(xValues, perBucket, collapsed, { eventIndex: 0, segmentIndex: 0, limit: MAX_GROUPS, grouped: query.groupBy !== undefined }) };
}
