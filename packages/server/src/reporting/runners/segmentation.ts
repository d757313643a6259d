// `/api/2/events/segmentation`: one or two events (`e`, `e2`) measured per bucket, one series
// per event and group-by values (the `limit` groups with the most of the metric over the
// range); property metrics measure the first group-by property; formulas combine measures
// of both events; rolling windows and averages reach back before the range.
import { type Formula, type FormulaFunction, evaluateFormula, formulaCalls } from '../formula.js';
import type { EventScan, EventSelector, PropertyRef, Segment } from '../../model/query.js';
import { bucketLabels, extendBack, type Interval, type ReportRange } from '../../model/time.js';
import { type RunnerContext, type Series, type SeriesResult, alignSeries } from './context.js';
import { type Counts, type Measure, counts } from './counts.js';

export type SegmentationMetric = 'uniques' | 'totals' | 'pct_dau' | 'average' | 'histogram' | 'sums' | 'value_avg' | 'formula';

export interface SegmentationQuery {
  range: ReportRange;
  interval: Interval;
  events: EventSelector[];
  groupBy: PropertyRef[];
  segment: Segment;
  metric: SegmentationMetric;
  formula?: Formula;
  /** Only users active in the bucket (`n=active`). */
  activeUsersOnly: boolean;
  rollingWindow?: number;
  rollingAverage?: number;
  limit: number;
}

export class SegmentationError extends Error {}

const HISTOGRAM_BINS = 10;
const key = (groups: string[], bucket?: string) => JSON.stringify([groups, bucket ?? null]);

function combine(a: Counts, b: Counts, op: (x: number, y: number) => number, denominatorGroups: (groups: string[]) => string[] = (groups) => groups): Counts {
  const lookup = new Map([...b.perBucket.map((r) => [key(r.groups, r.bucket), r.value] as const), ...b.collapsed.map((r) => [key(r.groups), r.value] as const)]);
  return {
    perBucket: a.perBucket.map((r) => ({ ...r, value: op(r.value, lookup.get(key(denominatorGroups(r.groups), r.bucket)) ?? 0) })),
    collapsed: a.collapsed.map((r) => ({ ...r, value: op(r.value, lookup.get(key(denominatorGroups(r.groups))) ?? 0) })),
  };
}
const divide = (x: number, y: number) => (y === 0 ? 0 : x / y);

/** Each value averaged with the `averaged - 1` before it (fewer at the start); plain loops, as `alignSeries`. */
function rollingAverage(values: number[], averaged: number): number[] {
  const result = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) {
    let sum = 0;
    for (let j = Math.max(0, i - averaged + 1); j <= i; j++) sum += values[j]!;
    result[i] = sum / Math.min(averaged, i + 1);
  }
  return result;
}

export async function segmentation(ctx: RunnerContext, query: SegmentationQuery): Promise<SeriesResult> {
  if (query.metric === 'histogram') return histogram(ctx, query);
  const xValues = bucketLabels(query.range, query.interval);
  const window = query.rollingWindow ?? 1;
  const averaged = query.rollingAverage ?? 1;
  const reach = Math.max(window, averaged) - 1;
  const extended = reach > 0 ? extendBack(ctx.timeZone, query.range, query.interval, reach) : query.range;
  const extendedLabels = bucketLabels(extended, query.interval);
  const windows = window > 1 ? { labels: extendedLabels, size: window } : undefined;
  const base = { appId: ctx.appId, timeZone: ctx.timeZone, segment: query.segment, interval: query.interval };
  const activeUsers = (range: ReportRange) => ctx.dialect.scan({ ...base, range, selector: { eventType: '_active', conditions: [] }, properties: [] });

  /** One measure of one event: per (extended, windowed) bucket, and over the range itself. */
  const measure = async (event: number, what: Measure, grouped: boolean): Promise<Counts> => {
    const measured = query.metric === 'sums' || query.metric === 'value_avg' || what.startsWith('prop');
    if (measured && query.groupBy.length === 0) throw new SegmentationError(`m=${query.metric} measures the first group-by property of e: give e a group_by`);
    const groupCount = grouped ? query.groupBy.length : 0;
    const properties = measured ? [...query.groupBy.slice(0, groupCount), query.groupBy[0]!] : query.groupBy.slice(0, groupCount);
    const scan = (range: ReportRange): EventScan => ({ ...base, range, selector: query.events[event]!, properties });
    const where = query.activeUsersOnly ? ctx.dialect.userInBucketOf(activeUsers(extended)) : undefined;
    const options = { groupCount, where };
    const separateWhole = windows !== undefined || reach > 0;
    // Groups are ranked by this very measure over the range: only the top ones need values per bucket.
    const onlyTop = grouped && what === query.metric && !separateWhole ? query.limit : undefined;
    const perBucket = await counts(ctx, scan(extended), what, { ...options, windows, onlyTop });
    const whole = separateWhole ? await counts(ctx, scan(query.range), what, options) : perBucket;
    return { perBucket: perBucket.perBucket, collapsed: whole.collapsed };
  };
  const dailyActive = async (): Promise<Counts> => counts(ctx, { ...base, range: extended, selector: { eventType: '_active', conditions: [] }, properties: [] }, 'uniques', { windows });

  const metricOf = async (event: number, grouped: boolean): Promise<Counts> => {
    switch (query.metric) {
      case 'uniques':
      case 'totals':
        return measure(event, query.metric, grouped);
      case 'average':
        return combine(await measure(event, 'totals', grouped), await measure(event, 'uniques', grouped), divide);
      case 'pct_dau':
        return combine(await measure(event, 'uniques', grouped), await dailyActive(), divide, () => []);
      case 'sums':
        return measure(event, 'propsum', false);
      case 'value_avg':
        return combine(await measure(event, 'propsum', false), await measure(event, 'propcount', false), divide);
      default:
        throw new SegmentationError(`m=${query.metric} is not a per-event metric`);
    }
  };

  const finish = (values: Counts, eventIndex: number, grouped: boolean): Series[] =>
    alignSeries(extendedLabels, values.perBucket, values.collapsed, { eventIndex, segmentIndex: 0, limit: query.limit, grouped }).map((series) => ({
      ...series,
      values: rollingAverage(series.values, averaged).slice(extendedLabels.length - xValues.length),
    }));

  if (query.metric === 'formula') {
    if (!query.formula) throw new SegmentationError('m=formula needs the formula parameter');
    const needed = new Map<string, Counts>();
    const primitive: Record<FormulaFunction, () => Promise<Counts>>[] = query.events.map((_, event) => ({
      UNIQUES: () => measure(event, 'uniques', false),
      TOTALS: () => measure(event, 'totals', false),
      AVG: async () => combine(await measure(event, 'totals', false), await measure(event, 'uniques', false), divide),
      ACTIVE: async () => combine(await measure(event, 'uniques', false), await dailyActive(), divide, () => []),
      PROPSUM: () => measure(event, 'propsum', false),
      PROPAVG: async () => combine(await measure(event, 'propsum', false), await measure(event, 'totals', false), divide),
      PROPMIN: () => measure(event, 'propmin', false),
      PROPMAX: () => measure(event, 'propmax', false),
    }));
    for (const { fn, event } of formulaCalls(query.formula)) {
      if (event >= query.events.length) throw new SegmentationError('The formula uses B, but e2 is not given');
      if (!needed.has(`${fn}:${event}`)) needed.set(`${fn}:${event}`, await primitive[event]![fn]());
    }
    const at = (bucket?: string) => (fn: FormulaFunction, event: number) => {
      const values = needed.get(`${fn}:${event}`)!;
      return (bucket === undefined ? values.collapsed[0]?.value : values.perBucket.find((r) => r.bucket === bucket)?.value) ?? 0;
    };
    const values: Counts = {
      perBucket: extendedLabels.map((bucket) => ({ groups: [], bucket, value: evaluateFormula(query.formula!, at(bucket)) })),
      collapsed: [{ groups: [], value: evaluateFormula(query.formula, at()) }],
    };
    return { xValues, series: finish(values, 0, false) };
  }

  const grouped = query.groupBy.length > 0 && query.metric !== 'sums' && query.metric !== 'value_avg';
  const series: Series[] = [];
  for (const event of query.events.keys()) series.push(...finish(await metricOf(event, grouped), event, grouped));
  return { xValues, series };
}

/** Users per bin of the first group-by property's numeric values over the range (equal-width bins). */
async function histogram(ctx: RunnerContext, query: SegmentationQuery): Promise<SeriesResult> {
  const property = query.groupBy[0];
  if (!property) throw new SegmentationError('m=histogram measures the first group-by property of e: give e a group_by');
  const scan = ctx.dialect.scan({ appId: ctx.appId, timeZone: ctx.timeZone, range: query.range, segment: query.segment, selector: query.events[0]!, properties: [property] });
  const { dialect } = ctx;
  const values = `(SELECT svc_id, ${dialect.number('p0')} AS v FROM (${scan}) WHERE ${dialect.number('p0')} IS NOT NULL)`;
  const [bounds] = await ctx.query(`SELECT min(v) AS low, max(v) AS high FROM ${values}`);
  if (bounds?.low === null || bounds?.low === undefined) return { xValues: [], series: [{ groups: [], eventIndex: 0, segmentIndex: 0, values: [], collapsed: 0 }] };
  const low = bounds.low as number;
  const width = ((bounds.high as number) - low) / HISTOGRAM_BINS || 1;
  const bins = (bounds.high as number) === low ? 1 : HISTOGRAM_BINS;
  const rows = await ctx.query(`SELECT ${dialect.integer(`least(floor((v - ${dialect.numeral(low)}) / ${dialect.numeral(width)}), ${bins - 1})`)} AS bin, ${dialect.distinctCount('svc_id')} AS users FROM ${values} GROUP BY bin`);
  const users = new Map(rows.map((r) => [r.bin as number, r.users as number]));
  const edges = Array.from({ length: bins + 1 }, (_, i) => low + i * width);
  const [total] = await ctx.query(`SELECT ${dialect.distinctCount('svc_id')} AS users FROM ${values}`);
  return {
    xValues: edges.slice(0, -1).map((from, i) => `${from}-${edges[i + 1]}`),
    series: [{ groups: [], eventIndex: 0, segmentIndex: 0, values: edges.slice(0, -1).map((_, i) => users.get(i) ?? 0), collapsed: total?.users as number }],
  };
}
