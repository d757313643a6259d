// getEventSegmentation (`GET /api/2/events/segmentation`,
// specs/reporting/operations/getEventSegmentation.yaml): one or two events measured per bucket,
// by up to two group-bys, or a formula of them (runners/segmentation.ts).
import type { HandlerRequest } from '../../http/operations.js';
import { type PropertyRef, type Segment, userProperty } from '../../model/query.js';
import { type Interval, intervalOf } from '../../model/time.js';
import { queryCost } from '../../shared/reporting-limits.js';
import { parseFormula } from '../formula.js';
import { segmentation, type SegmentationMetric } from '../runners/segmentation.js';
import { BadReportRequest, type ReportingOperation } from './operation.js';
import { days, EVENT_TYPE_COST, type EventSpecification, GROUP_BY_COST, groupBys, range, segmentOf, selector } from './parameters.js';

type Query = HandlerRequest<'getEventSegmentation'>['query'] & { start: string; end: string; e: EventSpecification };

interface Parameters {
  query: Query;
  events: EventSpecification[];
  groupBy: PropertyRef[];
  segment: Segment;
  interval: Interval;
}

/** Longest rolling window or average per interval, in periods: as far back as the interval's longest range. */
const MAX_ROLLING: Record<Interval, number> = { minute5: 576, hour: 168, day: 365, week: 156, month: 36 };

export const getEventSegmentation: ReportingOperation<'getEventSegmentation', Parameters> = {
  parameters: (request) => {
    const query = request.query as Query;
    const events = [query.e, ...(query.e2 ? [query.e2] : [])];
    const groupBy = [...groupBys(query.e), ...[query.g, query.g2].flatMap((g) => (g ? [userProperty(g)] : []))];
    if (groupBy.length > 2) throw new BadReportRequest('At most two group-bys per query (e.group_by, g and g2 together)');
    const segment = segmentOf(query.s);
    const interval = intervalOf(query.i);
    for (const [name, periods] of [['rollingWindow', query.rollingWindow], ['rollingAverage', query.rollingAverage]] as const) {
      if (periods !== undefined && periods > MAX_ROLLING[interval]) throw new BadReportRequest(`${name} is ${periods} periods; at most ${MAX_ROLLING[interval]} for this interval`);
    }
    return { query, events, groupBy, segment, interval };
  },

  cost: ({ query, events, groupBy, segment }) => queryCost(days(query.start, query.end), segment.length, events.length * EVENT_TYPE_COST + GROUP_BY_COST * groupBy.length * events.length),

  answer: async (ctx, { query: q, events, groupBy, segment, interval }, env) => {
    const metric = (q.m ?? 'uniques') as SegmentationMetric;
    const names = await env.eventTypeNames(ctx.appId);
    const result = await segmentation(ctx, {
      range: range(ctx.timeZone, q.start, q.end, interval),
      interval,
      events: events.map((e) => selector(e, names)),
      groupBy,
      segment,
      metric,
      formula: metric === 'formula' && q.formula ? parseFormula(q.formula) : undefined,
      activeUsersOnly: q.n === 'active',
      rollingWindow: q.rollingWindow,
      rollingAverage: q.rollingAverage,
      limit: q.limit ?? 100,
    });
    return {
      status: 200,
      body: {
        data: {
          xValues: result.xValues,
          series: result.series.map((s) => s.values),
          // As the SeriesLabel schema says: the segment index alone for one event without group-by.
          seriesLabels: result.series.map((s) => ((q.e2 && metric !== 'formula') || s.groups.length > 0 ? [s.segmentIndex, ...(q.e2 ? [events[s.eventIndex]!.event_type] : []), ...s.groups] : s.segmentIndex)),
          seriesCollapsed: result.series.map((s) => [{ setId: '', value: s.collapsed }]),
          seriesMeta: result.series.map((s) => (metric === 'formula' ? { segmentIndex: s.segmentIndex, formulaIndex: 0, formula: q.formula ?? '' } : { segmentIndex: s.segmentIndex, eventIndex: s.eventIndex })),
        },
      },
    };
  },
};
