// Handlers of the reporting group: decoded parameters → query model → runner → the answer
// in the shapes the platform returns. Every request passes the project's limits first.
import { operations, parseOperationRequest } from '@svc/openapi-validation';
import type { HandlerRequest, Reply } from '../http/operations.js';
import type { components } from '../generated/reporting.js';
import type { ReportingSource } from '../store/types.js';
import type { EventTypeNames } from '../model/event-type-names.js';
import { type ChartOperation, type SavedChart, chartQueryString } from './charts.js';
import { type CsvTable, chartCsv } from './csv.js';
import { FormulaError, parseFormula } from './formula.js';
import { type ExceededLimit, queryCost, type ReportingLimits } from '../shared/reporting-limits.js';
import { ClickHouseDialect, refusalOf } from '../store/clickhouse/dialect.js';
import type { Dialect } from '../store/dialect.js';
import { DuckDbDialect } from '../store/duckdb/dialect.js';
import { type Condition, type EventSelector, type PropertyRef, type Segment, UnknownProperty, userProperty } from '../model/query.js';
import { composition } from './runners/composition.js';
import type { RunnerContext } from './runners/context.js';
import { eventTypeTotals } from './runners/event-types.js';
import type { FunnelCounts } from '../model/funnel-times.js';
import { funnel } from './runners/funnels.js';
import { SegmentationError, segmentation, type SegmentationMetric } from './runners/segmentation.js';
import { DEFAULT_BINS_MS, MAX_SESSION_MS, dailySessions, sessionLengths } from './runners/sessions.js';
import { userCounts } from './runners/users.js';
import { intervalOf, type Interval, localDateLabel, parseReportDate, type ReportRange, reportRange } from '../model/time.js';

type Schemas = components['schemas'];
type ReportingOperation =
  | 'getUserCounts'
  | 'getSessionLengthDistribution'
  | 'getAverageSessionLength'
  | 'getAverageSessionsPerUser'
  | 'getUserComposition'
  | 'listEventTypeTotals'
  | 'getEventSegmentation'
  | 'getFunnel'
  | 'getChartCsv';

/** A request the spec lets through but the service cannot answer: 400 with the reason. */
export class BadReportRequest extends Error {}

/** Longest range per interval, in days (the specs' descriptions). */
const MAX_DAYS: Record<Interval, number> = { minute5: 2, hour: 7, day: 365, week: 1096, month: 1096 };
/** Longest rolling window or average per interval, in periods: as far back as the interval's longest range. */
const MAX_ROLLING: Record<Interval, number> = { minute5: 576, hour: 168, day: 365, week: 156, month: 36 };
const EVENT_TYPE_COST = 1;
const GROUP_BY_COST = 4;
/** A funnel's days as the platform writes them ("Mar 01"); one formatter, as making one per day took 5 ms an answer. */
const FUNNEL_DAY = new Intl.DateTimeFormat('en-US', { month: 'short', day: '2-digit', timeZone: 'UTC' });

function range(timeZone: string, start: string, end: string, interval: Interval): ReportRange {
  for (const date of [start, end]) {
    const { year, month, day } = parseReportDate(date);
    const parsed = new Date(Date.UTC(year, month - 1, day));
    if (parsed.getUTCMonth() !== month - 1 || parsed.getUTCDate() !== day) throw new BadReportRequest(`${date} is not a date (YYYYMMDD)`);
  }
  const result = reportRange(timeZone, start, end);
  if (result.days < 1) throw new BadReportRequest(`end (${end}) is before start (${start})`);
  if (result.days > MAX_DAYS[interval]) throw new BadReportRequest(`The range has ${result.days} days; at most ${MAX_DAYS[interval]} for this interval`);
  return result;
}

type EventSpecification = Schemas['EventSpecification'];

/** The selector of an event specification; an event type renamed in the tracking plan selects the events of its ingested name. */
function selector(spec: EventSpecification, names: EventTypeNames): EventSelector {
  return {
    eventType: names.ingestedNames.get(spec.event_type) ?? spec.event_type,
    conditions: (spec.filters ?? []).map((filter) => ({
      property: filter.subprop_type === 'event' ? { kind: 'event', name: filter.subprop_key } : userProperty(filter.subprop_key),
      op: filter.subprop_op,
      values: filter.subprop_value.map(String),
    })),
  };
}

const groupBys = (spec: EventSpecification): PropertyRef[] => (spec.group_by ?? []).map((g) => (g.type === 'event' ? { kind: 'event', name: g.value } : userProperty(g.value)));

function segmentOf(conditions: Schemas['SegmentCondition'][] | undefined): Segment {
  return (conditions ?? []).map((c): Segment[number] => {
    if (c.prop === 'userdata_cohort') return { cohortId: c.values[0]!, member: c.op !== 'is not' };
    return { property: userProperty(c.prop), op: c.op, values: c.values } satisfies Condition;
  });
}

/** The dialect a project's reporting queries are written in (the engine's). */
export type DialectOf = (appId: number) => Promise<Dialect>;

/** The DuckDB dialect of a project: event properties a query reads from the JSON are noted for materialization. */
export const duckDbDialectOf =
  (source: ReportingSource): DialectOf =>
  async (appId) => {
    const [options] = await source.query(DuckDbDialect.optionsQuery(appId));
    const columns = options!.columns as { name: string; column_name: string }[];
    return new DuckDbDialect({
      userMappings: options!.mapped === true,
      propertyColumns: new Map(columns.map((c) => [c.name, c.column_name])),
      // In the background: the query reads the JSON meanwhile.
      readFromJson: (name) => void source.materializeEventProperties([name]).catch(() => undefined),
    });
  };

export const clickHouseDialectOf =
  (source: ReportingSource): DialectOf =>
  async (appId) => {
    const [mappings] = await source.query(ClickHouseDialect.userMappingsQuery(appId));
    return new ClickHouseDialect({ userMappings: Number(mappings?.mapped) === 1 });
  };

export class ReportingHandlers {
  constructor(
    private readonly source: ReportingSource,
    private readonly limits: ReportingLimits,
    /** The saved charts of a project. */
    private readonly charts: (appId: number) => SavedChart[],
    /** What the project's tracking plan says of its event types. */
    private readonly eventTypeNames: (appId: number) => Promise<EventTypeNames>,
    private readonly dialectOf: DialectOf = duckDbDialectOf(source),
  ) {}

  private async context(request: HandlerRequest<ReportingOperation>): Promise<RunnerContext> {
    const project = request.caller.project!;
    const timeZone = project.time_zone ?? 'UTC';
    return {
      appId: project.app_id,
      timeZone,
      dialect: await this.dialectOf(project.app_id),
      query: (sql) => this.source.query(sql),
      queryChunks: (sql) => this.source.queryChunks(sql),
      timelineFunnel: (query) => this.source.timelineFunnel(query),
      timelineCounts: (query) => this.source.timelineCounts(query),
      now: () => request.receivedAt,
    };
  }

  /** Runs `work` within the project's limits; 429 when one refuses. */
  private async limited<R>(request: HandlerRequest<ReportingOperation>, cost: number, work: (ctx: RunnerContext) => Promise<R>): Promise<R | LimitReply> {
    const admission = await this.limits.admit(request.caller.project!.app_id, cost, request.receivedAt);
    if ('exceeded' in admission) return limitReply(admission.exceeded, admission.message, admission.retryAfterSeconds);
    try {
      return await work(await this.context(request));
    } finally {
      admission.release();
    }
  }

  /** `limited`, with what the query model and runners refuse answered with 400. */
  private async checked<R>(request: HandlerRequest<ReportingOperation>, cost: number, work: (ctx: RunnerContext) => Promise<R>): Promise<R | LimitReply | BadReply> {
    try {
      return await this.limited(request, cost, work);
    } catch (error) {
      if (error instanceof BadReportRequest || error instanceof UnknownProperty || error instanceof SegmentationError || error instanceof FormulaError) {
        return { status: 400, body: { code: 400, error: error.message } };
      }
      const refusal = refusalOf(error);
      if (refusal !== undefined) return { status: 400, body: { code: 400, error: `Not supported on the ClickHouse engine: ${refusal}` } };
      throw error;
    }
  }

  getUserCounts = async (request: HandlerRequest<'getUserCounts'>): Promise<Reply<'getUserCounts'>> => {
    const { start, end, m, i, s, g } = request.query as HandlerRequest<'getUserCounts'>['query'] & { start: string; end: string };
    const interval = intervalOf(i);
    const segment = segmentOf(s);
    return this.checked(request, queryCost(Math.max(1, days(start, end)), segment.length + (g ? 1 : 0), EVENT_TYPE_COST), async (ctx) => {
      const result = await userCounts(ctx, { range: range(ctx.timeZone, start, end, interval), metric: m ?? 'active', interval, segment, groupBy: g ? userProperty(g) : undefined });
      const data = {
        series: result.series.map((s) => s.values),
        seriesCollapsed: result.series.map((s) => [s.collapsed]),
        seriesLabels: result.series.map((s) => (s.groups.length === 0 ? 0 : s.groups.join(', '))),
        seriesMeta: result.series.map((s) => ({ segmentIndex: s.segmentIndex })),
        xValues: result.xValues,
      };
      return { status: 200 as const, body: { data } };
    });
  };

  getSessionLengthDistribution = async (request: HandlerRequest<'getSessionLengthDistribution'>): Promise<Reply<'getSessionLengthDistribution'>> => {
    const q = request.query as HandlerRequest<'getSessionLengthDistribution'>['query'] & { start: string; end: string };
    return this.checked(request, queryCost(days(q.start, q.end), 0, EVENT_TYPE_COST), async (ctx) => {
      const { xValues, counts } = await sessionLengths(ctx, range(ctx.timeZone, q.start, q.end, 'day'), binEdges(q));
      return { status: 200 as const, body: { data: { series: [counts], xValues } } };
    });
  };

  getAverageSessionLength = async (request: HandlerRequest<'getAverageSessionLength'>): Promise<Reply<'getAverageSessionLength'>> => this.dailySessions(request, 'averageLength');

  getAverageSessionsPerUser = async (request: HandlerRequest<'getAverageSessionsPerUser'>): Promise<Reply<'getAverageSessionsPerUser'>> => this.dailySessions(request, 'perUser');

  private async dailySessions(request: HandlerRequest<'getAverageSessionLength' | 'getAverageSessionsPerUser'>, measure: 'averageLength' | 'perUser') {
    const { start, end } = request.query as { start: string; end: string };
    return this.checked(request, queryCost(days(start, end), 0, EVENT_TYPE_COST), async (ctx) => {
      const result = await dailySessions(ctx, range(ctx.timeZone, start, end, 'day'), measure);
      const data = { series: result.series.map((s) => s.values), seriesCollapsed: result.series.map((s) => [s.collapsed]), seriesLabels: [0], seriesMeta: [{ segmentIndex: 0 }], xValues: result.xValues };
      return { status: 200 as const, body: { data } };
    });
  }

  getUserComposition = async (request: HandlerRequest<'getUserComposition'>): Promise<Reply<'getUserComposition'>> => {
    const { start, end, p } = request.query as { start: string; end: string; p: string };
    return this.checked(request, queryCost(days(start, end), 1, EVENT_TYPE_COST), async (ctx) => {
      const { values, counts } = await composition(ctx, range(ctx.timeZone, start, end, 'day'), userProperty(p));
      return { status: 200 as const, body: { data: { series: [counts], seriesLabels: [p], xValues: values } } };
    });
  };

  listEventTypeTotals = async (request: HandlerRequest<'listEventTypeTotals'>): Promise<Reply<'listEventTypeTotals'>> =>
    this.limited(request, EVENT_TYPE_COST, async (ctx) => {
      const [types, names] = await Promise.all([eventTypeTotals(ctx), this.eventTypeNames(ctx.appId)]);
      const data = types.map((t) => {
        const plan = names.flags.get(t.eventType);
        return { value: t.eventType, display: plan?.display ?? t.eventType, totals: t.totals, non_active: t.nonActive, deleted: plan?.deleted ?? false, hidden: plan?.hidden ?? false, flow_hidden: plan?.flowHidden ?? false };
      });
      return { status: 200 as const, body: { data } };
    });

  getEventSegmentation = async (request: HandlerRequest<'getEventSegmentation'>): Promise<Reply<'getEventSegmentation'>> => {
    const q = request.query as HandlerRequest<'getEventSegmentation'>['query'] & { start: string; end: string; e: EventSpecification };
    const events = [q.e, ...(q.e2 ? [q.e2] : [])];
    const groupBy = [...groupBys(q.e), ...[q.g, q.g2].flatMap((g) => (g ? [userProperty(g)] : []))];
    if (groupBy.length > 2) return { status: 400, body: { code: 400, error: 'At most two group-bys per query (e.group_by, g and g2 together)' } };
    const segment = segmentOf(q.s);
    const interval = intervalOf(q.i);
    for (const [name, periods] of [['rollingWindow', q.rollingWindow], ['rollingAverage', q.rollingAverage]] as const) {
      if (periods !== undefined && periods > MAX_ROLLING[interval]) return { status: 400, body: { code: 400, error: `${name} is ${periods} periods; at most ${MAX_ROLLING[interval]} for this interval` } };
    }
    const cost = queryCost(days(q.start, q.end), segment.length, events.length * EVENT_TYPE_COST + GROUP_BY_COST * groupBy.length * events.length);
    return this.checked(request, cost, async (ctx) => {
      const metric = (q.m ?? 'uniques') as SegmentationMetric;
      const names = await this.eventTypeNames(ctx.appId);
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
        status: 200 as const,
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
    });
  };

  getChartCsv = async (request: HandlerRequest<'getChartCsv'>): Promise<Reply<'getChartCsv'>> => {
    const project = request.caller.project!;
    const chart = this.charts(project.app_id).find((c) => c.id === request.path.chart_id);
    if (!chart) return { status: 404, body: { code: 404, error: `No saved chart ${request.path.chart_id} in this project` } };
    const today = localDateLabel(project.time_zone ?? 'UTC', request.receivedAt).replace(/-/g, '');
    const monthAgo = localDateLabel(project.time_zone ?? 'UTC', request.receivedAt - 29 * 86_400_000).replace(/-/g, '');
    // A chart saved without a range (a data table) covers the last 30 days unless the request gives one.
    const query = chartQueryString(chart, { start: request.query.start ?? (chart.query.start === undefined ? monthAgo : undefined), end: request.query.end ?? (chart.query.end === undefined ? today : undefined) });
    const ref = operations().find((o) => o.op.operationId === chart.operation)!;
    const parsed = parseOperationRequest(ref, { query, headers: new Map(), pathParams: {}, body: undefined });
    const problems = parsed.problems.filter((p) => p.where !== 'credentials');
    if (problems.length > 0) return { status: 400, body: { code: 400, error: `The saved query of chart ${chart.id} is invalid: ${problems.map((p) => `${p.where}: ${p.message}`).join('; ')}` } };
    const decoded = Object.fromEntries([...parsed.params].filter(([key]) => key.startsWith('query:')).map(([key, value]) => [key.slice('query:'.length), value]));
    const inner = { ...request, query: decoded } as never;
    const answers: Record<ChartOperation, () => Promise<Reply<ChartOperation>>> = {
      getUserCounts: () => this.getUserCounts(inner),
      getSessionLengthDistribution: () => this.getSessionLengthDistribution(inner),
      getAverageSessionLength: () => this.getAverageSessionLength(inner),
      getAverageSessionsPerUser: () => this.getAverageSessionsPerUser(inner),
      getUserComposition: () => this.getUserComposition(inner),
      getEventSegmentation: () => this.getEventSegmentation(inner),
      getFunnel: () => this.getFunnel(inner),
    };
    const answer = await answers[chart.operation]();
    if (answer.status === 400 || answer.status === 429) return answer as Reply<'getChartCsv'>;
    if (answer.status !== 200) throw new Error(`chart ${chart.id}: ${chart.operation} answered ${answer.status}`);
    const csv = chartCsv({ title: chart.title, metric: String(chart.query.m ?? ref.op.summary), ...chartTable(chart.operation, (answer.body as { data: unknown }).data) });
    return { status: 200, body: { data: csv } };
  };

  getFunnel = async (request: HandlerRequest<'getFunnel'>): Promise<Reply<'getFunnel'>> => {
    const q = request.query as HandlerRequest<'getFunnel'>['query'] & { start: string; end: string; e: EventSpecification[] };
    const segment = segmentOf(q.s);
    const groupBy = q.g ? userProperty(q.g) : undefined;
    const cost = queryCost(days(q.start, q.end), segment.length, q.e.length * 2 + (groupBy ? GROUP_BY_COST * q.e.length : 0));
    return this.checked(request, cost, async (ctx) => {
      const names = await this.eventTypeNames(ctx.appId);
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
        status: 200 as const,
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
    });
  };
}

/** A saved chart's answer as a table: one row per series (or funnel element), one column per x value (or step). */
function chartTable(operation: ChartOperation, data: unknown): Omit<CsvTable, 'title' | 'metric'> {
  if (operation === 'getFunnel') {
    const elements = data as { events: string[]; groupValue: string; cumulativeRaw: number[] }[];
    return { header: ['Segment', ...(elements[0]?.events ?? [])], rows: elements.map((e) => ({ label: e.groupValue || 'All users', values: e.cumulativeRaw })) };
  }
  const { xValues, series, seriesLabels } = data as { xValues: string[]; series: number[][]; seriesLabels?: unknown[] };
  const labelOf = (i: number) => {
    const label = seriesLabels?.[i];
    if (typeof label === 'string') return label;
    if (Array.isArray(label)) return label.slice(1).join(', ');
    return 'All users';
  };
  return { header: ['Segment', ...xValues], rows: series.map((values, i) => ({ label: labelOf(i), values })) };
}

type LimitReply = { status: 429; body: Schemas['ReportingLimitError']; headers: Record<string, string> };
type BadReply = { status: 400; body: { code: number; error: string } };

function limitReply(exceeded: ExceededLimit, message: string, retryAfterSeconds: number): LimitReply {
  return { status: 429, body: { code: 429, error: message, exceeded_limit: exceeded }, headers: { 'retry-after': String(retryAfterSeconds) } };
}

/** Calendar days from `start` to `end` (`YYYYMMDD`), for the cost (the range is checked later). */
function days(start: string, end: string): number {
  const at = (text: string) => {
    const { year, month, day } = parseReportDate(text);
    return Date.UTC(year, month - 1, day);
  };
  return Math.max(1, (at(end) - at(start)) / 86_400_000 + 1);
}

/** Bin edges (ms) of the session-length histogram: custom ones when min, max and unit are valid, else the defaults. */
/** Custom session-length bins per answer, at most. */
const MAX_CUSTOM_BINS = 100;

function binEdges(q: { timeHistogramConfigBinTimeUnit?: string; timeHistogramConfigBinMin?: number; timeHistogramConfigBinMax?: number; timeHistogramConfigBinSize?: number }): number[] {
  const unit = { seconds: 1000, minutes: 60_000, hours: 3_600_000 }[q.timeHistogramConfigBinTimeUnit ?? ''];
  const { timeHistogramConfigBinMin: min, timeHistogramConfigBinMax: max, timeHistogramConfigBinSize: size } = q;
  if (unit === undefined || min === undefined || max === undefined || !(min >= 0) || !(max > min) || max * unit > MAX_SESSION_MS || (size !== undefined && !(size > 0))) return DEFAULT_BINS_MS;
  const step = size ?? (max - min) / 10;
  const bins = Math.ceil((max - min) / step);
  if (!(step > 0) || !(bins <= MAX_CUSTOM_BINS)) throw new BadReportRequest(`The custom bins from ${min} to ${max} by ${step} are ${bins} bins; at most ${MAX_CUSTOM_BINS}`);
  return [...Array.from({ length: bins }, (_, i) => (min + i * step) * unit), max * unit];
}

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
