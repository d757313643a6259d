// getUserCounts (`GET /api/2/users`, specs/reporting/operations/getUserCounts.yaml): active or
// new users per day, week or month in one segment, a series per value of `g` (runners/users.ts).
import type { HandlerRequest } from '../../http/operations.js';
import { type Segment, userProperty } from '../../model/query.js';
import { type Interval, intervalOf } from '../../model/time.js';
import { queryCost } from '../../shared/reporting-limits.js';
import { userCounts } from '../runners/users.js';
import type { ReportingOperation } from './operation.js';
import { days, EVENT_TYPE_COST, range, segmentOf } from './parameters.js';

type Query = HandlerRequest<'getUserCounts'>['query'] & { start: string; end: string };

interface Parameters {
  query: Query;
  interval: Interval;
  segment: Segment;
}

export const getUserCounts: ReportingOperation<'getUserCounts', Parameters> = {
  parameters: (request) => {
    const query = request.query as Query;
    return { query, interval: intervalOf(query.i), segment: segmentOf(query.s) };
  },

  cost: ({ query, segment }) => queryCost(Math.max(1, days(query.start, query.end)), segment.length + (query.g ? 1 : 0), EVENT_TYPE_COST),

  answer: async (ctx, { query: { start, end, m, g }, interval, segment }) => {
    const result = await userCounts(ctx, { range: range(ctx.timeZone, start, end, interval), metric: m ?? 'active', interval, segment, groupBy: g ? userProperty(g) : undefined });
    const data = {
      series: result.series.map((s) => s.values),
      seriesCollapsed: result.series.map((s) => [s.collapsed]),
      seriesLabels: result.series.map((s) => (s.groups.length === 0 ? 0 : s.groups.join(', '))),
      seriesMeta: result.series.map((s) => ({ segmentIndex: s.segmentIndex })),
      xValues: result.xValues,
    };
    return { status: 200, body: { data } };
  },
};
