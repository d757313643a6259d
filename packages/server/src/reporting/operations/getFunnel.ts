// getFunnel (`GET /api/2/funnels`, specs/reporting/operations/getFunnel.yaml): users through
// the steps, in total and per entry day, per group value (runners/funnels.ts).
import type { HandlerRequest } from '../../http/operations.js';
import type { FunnelCounts } from '../../model/funnel-times.js';
import { type PropertyRef, type Segment, userProperty } from '../../model/query.js';
import { queryCost } from '../../shared/reporting-limits.js';
import { funnel } from '../runners/funnels.js';
import type { ReportingOperation } from './operation.js';
import { days, type EventSpecification, GROUP_BY_COST, range, segmentOf, selector } from './parameters.js';

type Query = HandlerRequest<'getFunnel'>['query'] & { start: string; end: string; e: EventSpecification[] };

interface Parameters {
  query: Query;
  segment: Segment;
  groupBy?: PropertyRef;
}

/** A funnel's days as the platform writes them ("Mar 01"); one formatter for every answer, as making one is costly. */
const FUNNEL_DAY = new Intl.DateTimeFormat('en-US', { month: 'short', day: '2-digit', timeZone: 'UTC' });

export const getFunnel: ReportingOperation<'getFunnel', Parameters> = {
  parameters: (request) => {
    const query = request.query as Query;
    return { query, segment: segmentOf(query.s), groupBy: query.g ? userProperty(query.g) : undefined };
  },

  cost: ({ query, segment, groupBy }) => queryCost(days(query.start, query.end), segment.length, query.e.length * 2 + (groupBy ? GROUP_BY_COST * query.e.length : 0)),

  answer: async (ctx, { query: q, segment, groupBy }, env) => {
    const names = await env.eventTypeNames(ctx.appId);
    const result = await funnel(ctx, {
      range: range(ctx.timeZone, q.start, q.end, 'day'),
      steps: q.e.map((e) => selector(e, names)),
      mode: q.mode ?? 'ordered',
      windowSeconds: q.cs ?? 2_592_000,
      segment,
      groupBy,
      limit: q.limit ?? 100,
    });
    const formatted = result.days.map((day) => FUNNEL_DAY.format(new Date(`${day}T00:00:00Z`)));
    const byDay = (counts: FunnelCounts[], value: (c: FunnelCounts) => number[]) => ({ xValues: result.days, formattedXValues: formatted, series: counts.map(value) });
    return {
      status: 200,
      body: {
        data: result.groups.map((group) => ({
          segmentIndex: 0,
          meta: { segmentIndex: 0 },
          groupValue: groupBy ? group.groupValue : '',
          events: q.e.map((e) => e.event_type),
          ...funnelSteps(group.total),
          dayFunnels: byDay(group.byDay, (c) => c.reached),
          dayMedianTransTimes: byDay(group.byDay, (c) => c.medianTimes),
          dayAvgTransTimes: byDay(group.byDay, (c) => c.averageTimes),
        })),
      },
    };
  },
};

/** A group's counts as the answer's step measures: raw, cumulative and step-by-step ratios, times, conversions and drop-offs. */
function funnelSteps(counts: FunnelCounts) {
  const raw = counts.reached;
  const converted: Record<string, number> = {};
  const dropoff: Record<string, number> = {};
  raw.forEach((value, k) => {
    converted[String(k)] = value;
    dropoff[String(k)] = k === 0 ? 0 : raw[k - 1]! - value;
  });
  return {
    cumulativeRaw: raw,
    cumulative: raw.map((value) => (raw[0] ? value / raw[0] : 0)),
    stepByStep: raw.map((value, k) => (k === 0 ? (raw[0] ? 1 : 0) : raw[k - 1] ? value / raw[k - 1]! : 0)),
    medianTransTimes: counts.medianTimes,
    avgTransTimes: counts.averageTimes,
    convertedCounts: converted,
    dropoffCounts: dropoff,
  };
}
