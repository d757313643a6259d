// getRevenueLtv (`GET /api/2/revenue/ltv`, specs/reporting/operations/getRevenueLtv.yaml): per
// cohort of new users, the revenue of their first N days (runners/revenue-ltv.ts) as the metric
// `m` asks, in the platform's shape: cohorts newest first, `r<N>d` once the window has ended.
import type { HandlerRequest } from '../../http/operations.js';
import { type PropertyRef, type Segment, userProperty } from '../../model/query.js';
import { queryCost } from '../../shared/reporting-limits.js';
import { type LtvCohort, type LtvGroup, type LtvInterval, type LtvWindow, revenueLtv } from '../runners/revenue-ltv.js';
import type { ReportingOperation } from './operation.js';
import { days, GROUP_BY_COST, range, segmentOf } from './parameters.js';

type Query = HandlerRequest<'getRevenueLtv'>['query'] & { start: string; end: string };

interface Parameters {
  query: Query;
  interval: LtvInterval;
  segment: Segment;
  groupBy?: PropertyRef;
}

const INTERVALS: Record<number, LtvInterval> = { 1: 'day', 7: 'week', 30: 'month' };

/** What `rNd` holds per `m`: ARPU, ARPPU, total revenue, paying users. */
const METRICS: Record<number, (window: LtvWindow, cohort: LtvCohort) => number> = {
  0: (window, cohort) => (cohort.users === 0 ? 0 : window.revenue / cohort.users),
  1: (window) => (window.payingUsers === 0 ? 0 : window.revenue / window.payingUsers),
  2: (window) => window.revenue,
  3: (window) => window.payingUsers,
};

export const getRevenueLtv: ReportingOperation<'getRevenueLtv', Parameters> = {
  parameters: (request) => {
    const query = request.query as Query;
    return { query, interval: INTERVALS[query.i ?? 1]!, segment: segmentOf(query.s), groupBy: query.g ? userProperty(query.g) : undefined };
  },

  // The documented model: days × conditions × 1 for an operation the documentation gives no cost.
  cost: ({ query, segment, groupBy }) => queryCost(days(query.start, query.end), segment.length + (groupBy ? GROUP_BY_COST : 0), 1),

  answer: async (ctx, { query: q, interval, segment, groupBy }) => {
    const groups = await revenueLtv(ctx, { range: range(ctx.timeZone, q.start, q.end, interval), interval, segment, groupBy, limit: q.limit ?? 100 });
    const metric = METRICS[q.m ?? 0]!;
    return {
      status: 200,
      body: { data: { seriesLabels: groups.map((group) => (groupBy ? group.groupValue : '')), series: groups.map((group) => ltvSeries(group, metric)) } },
    };
  },
};

/** Money and averages to 6 decimal places: sums of doubles carry noise in the last digits. */
const rounded = (value: number) => Math.round(value * 1e6) / 1e6 || 0;

function ltvSeries(group: LtvGroup, metric: (window: LtvWindow, cohort: LtvCohort) => number) {
  const values = group.cohorts.map((cohort) => [
    cohort.label,
    {
      ...Object.fromEntries(cohort.windows.map((window) => [`r${window.days}d`, rounded(metric(window, cohort))])),
      count: cohort.users,
      paid: cohort.paid,
      total_amount: rounded(cohort.totalAmount),
    },
  ]);
  return { dates: group.cohorts.map((cohort) => cohort.label).reverse(), values: Object.fromEntries(values) };
}
