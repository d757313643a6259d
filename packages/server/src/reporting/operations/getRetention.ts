// getRetention (`GET /api/2/retention`, specs/reporting/operations/getRetention.yaml): per
// cohort of users by their first start event, who did the return event N intervals later
// (runners/retention.ts), in the platform's shape: labelled cohorts, newest first.
import type { HandlerRequest } from '../../http/operations.js';
import { type PropertyRef, type Segment, userProperty } from '../../model/query.js';
import { queryCost } from '../../shared/reporting-limits.js';
import { type RetentionCell, type RetentionGroup, type RetentionInterval, type RetentionMode, retention } from '../runners/retention.js';
import { BadReportRequest, type ReportingOperation } from './operation.js';
import { days, type EventSpecification, GROUP_BY_COST, range, segmentOf, selector } from './parameters.js';

type Query = HandlerRequest<'getRetention'>['query'] & { start: string; end: string; se: EventSpecification; re: EventSpecification };

interface Parameters {
  query: Query;
  mode: RetentionMode;
  brackets: [number, number][];
  interval: RetentionInterval;
  segment: Segment;
  groupBy?: PropertyRef;
}

/** The documented cost of a retention query per condition and day. */
export const RETENTION_COST = 8;

const INTERVALS: Record<number, RetentionInterval> = { 1: 'day', 7: 'week', 30: 'month' };

export const getRetention: ReportingOperation<'getRetention', Parameters> = {
  parameters: (request) => {
    const query = request.query as Query;
    for (const [name, spec] of [['se', query.se], ['re', query.re]] as const) {
      if (spec.group_by?.length) throw new BadReportRequest(`Invalid ${name}: a retention takes no group_by in its events; group with g`);
    }
    if (query.re.event_type === '_new') throw new BadReportRequest('Invalid re: _new is a start event only (each user’s first event)');
    const mode: RetentionMode = query.rm === 'rolling' || query.rm === 'bracket' ? query.rm : 'nday';
    return { query, mode, brackets: mode === 'bracket' ? brackets(query.rb) : [], interval: INTERVALS[query.i ?? 1]!, segment: segmentOf(query.s), groupBy: query.g ? userProperty(query.g) : undefined };
  },

  cost: ({ query, segment, groupBy }) => queryCost(days(query.start, query.end), segment.length + (groupBy ? GROUP_BY_COST : 0), RETENTION_COST),

  answer: async (ctx, { query: q, mode, brackets, interval, segment, groupBy }, env) => {
    const names = await env.eventTypeNames(ctx.appId);
    const groups = await retention(ctx, {
      range: range(ctx.timeZone, q.start, q.end, interval),
      interval,
      start: q.se.event_type === '_new' ? 'new' : selector(q.se, names),
      returning: selector(q.re, names),
      mode,
      brackets,
      segment,
      groupBy,
      limit: q.limit ?? 100,
    });
    return {
      status: 200,
      body: {
        data: {
          series: groups.map((group) => retentionSeries(group, interval)),
          seriesMeta: groups.map(() => ({ segmentIndex: 0, eventIndex: 0 })),
          seriesLabels: groups.map((group) => (groupBy ? group.groupValue : 0)),
        },
      },
    };
  },
};

/** `rb`: pairs [from, to) ascending and apart (the spec has checked their shape and bounds). */
function brackets(rb: number[][] | undefined): [number, number][] {
  if (!rb) throw new BadReportRequest('Invalid rb: rm=bracket needs brackets, e.g. rb=[[0,5]] for Day 0 to Day 4');
  return rb.map(([from, to], b): [number, number] => {
    if (from! >= to!) throw new BadReportRequest(`Invalid rb: bracket ${b + 1} ([${from},${to}]) is empty; [from, to] has from < to, to excluded`);
    const previous = rb[b - 1];
    if (previous && from! < previous[1]!) throw new BadReportRequest(`Invalid rb: bracket ${b + 1} ([${from},${to}]) starts before bracket ${b} ([${previous[0]},${previous[1]}]) ends; brackets are ascending and apart`);
    return [from!, to!];
  });
}

const DAY_LABEL = new Intl.DateTimeFormat('en-US', { month: 'short', day: '2-digit', timeZone: 'UTC' });
const DAY_YEAR_LABEL = new Intl.DateTimeFormat('en-US', { month: 'short', day: '2-digit', year: 'numeric', timeZone: 'UTC' });
const MONTH_LABEL = new Intl.DateTimeFormat('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' });

/** One group's cohorts as the platform writes them: labels newest first, the arrays by label, the columns combined. */
function retentionSeries(group: RetentionGroup, interval: RetentionInterval) {
  const years = new Set(group.cohorts.map((cohort) => cohort.label.slice(0, 4)));
  const format = interval === 'month' ? MONTH_LABEL : years.size > 1 ? DAY_YEAR_LABEL : DAY_LABEL;
  const labelled = group.cohorts.map((cohort) => ({ label: format.format(new Date(`${cohort.label}T00:00:00Z`)), cells: cohort.cells }));
  const columns = Math.max(...labelled.map((cohort) => cohort.cells.length));
  const combined = Array.from({ length: columns }, (_, j) => {
    const cells = labelled.flatMap((cohort): RetentionCell[] => (j < cohort.cells.length ? [cohort.cells[j]!] : []));
    return { count: sum(cells, (c) => c.count), outof: sum(cells, (c) => c.outof), retainedSetId: null, incomplete: cells.some((c) => c.incomplete) };
  });
  return { dates: labelled.map((cohort) => cohort.label).reverse(), values: Object.fromEntries(labelled.map((cohort) => [cohort.label, cohort.cells])), combined };
}

const sum = <T>(items: T[], value: (item: T) => number) => items.reduce((total, item) => total + value(item), 0);
