// `/api/2/funnels`: per user the winning path over the events of the steps, counted per group
// value (`g` on the winning entry's event) and per entry day (the best path entering that
// day). Ordered and sequential funnels are computed by the engine (the dialect's
// `chainedFunnel`: chains of "next matching event" joins, or each user's event lists walked
// with array functions); unordered ones by funnel-paths.ts over each user's events, read a
// chunk of users at a time. Plain funnels are answered from the engine's per-user timelines
// when it keeps them (timeline-funnel.ts), with the same answers.
import { bestPath, type FunnelPath, type UserEvents } from '../funnel-paths.js';
import { type EventSelector, NONE, type PropertyRef, type Segment } from '../query/model.js';
import { bucketLabels, type ReportRange } from '../time.js';
import { compareText, type RunnerContext } from './context.js';

export type FunnelMode = 'ordered' | 'unordered' | 'sequential';

export interface FunnelQuery {
  range: ReportRange;
  steps: EventSelector[];
  mode: FunnelMode;
  /** Conversion window, seconds. */
  windowSeconds: number;
  segment: Segment;
  groupBy?: PropertyRef;
  limit: number;
}

/** Users per step and their step times, for one group value (and one entry day). */
export interface FunnelCounts {
  /** Users who reached each step. */
  reached: number[];
  /** Per transition k (1..steps-1), the median time (ms) users took from step k to k+1; index 0: the whole funnel. */
  medianTimes: number[];
  /** The same, averages. */
  averageTimes: number[];
}

export interface FunnelGroup {
  groupValue: string;
  total: FunnelCounts;
  /** Per day of `days`. */
  byDay: FunnelCounts[];
}

export interface FunnelResult {
  days: string[];
  groups: FunnelGroup[];
}

/**
 * Times (ms) as paths are counted: a growing typed array. JS arrays grown to a day's 200k paths
 * were large objects of V8's heap, each growth garbage for a full collection: a 3-step funnel
 * of 10M events spent a third of its time in them.
 */
class TimeList {
  private values: Float64Array<ArrayBuffer> = new Float64Array(0);
  length = 0;

  push(value: number): void {
    this.reserve(1);
    this.values[this.length++] = value;
  }

  append(values: Float64Array): void {
    this.reserve(values.length);
    this.values.set(values, this.length);
    this.length += values.length;
  }

  /** Room for `count` more times (doubling). */
  private reserve(count: number): void {
    if (this.length + count <= this.values.length) return;
    const grown = new Float64Array(Math.max(16, 2 * (this.length + count)));
    grown.set(this.counted());
    this.values = grown;
  }

  /** The times counted, in place: a median reorders them. */
  counted(): Float64Array<ArrayBuffer> {
    return this.values.subarray(0, this.length);
  }
}

/** Transition times while a group is counted in JS; medians and averages at the end. */
interface TimesAccumulator {
  reached: number[];
  transitionTimes: TimeList[];
}

/** A group's times over the range and per entry day, while counted in JS. */
export interface GroupTimes {
  total: TimesAccumulator;
  byDay: TimesAccumulator[];
}

const emptyTimes = (steps: number): TimesAccumulator => ({ reached: Array<number>(steps).fill(0), transitionTimes: Array.from({ length: steps }, () => new TimeList()) });

export const emptyGroupTimes = (steps: number, days: number): GroupTimes => ({ total: emptyTimes(steps), byDay: Array.from({ length: days }, () => emptyTimes(steps)) });

/** A group's times in plain arrays, to pass to another thread (their buffers transferable). */
export interface PlainGroupTimes {
  total: PlainTimes;
  byDay: PlainTimes[];
}

interface PlainTimes {
  reached: number[];
  transitionTimes: Float64Array<ArrayBuffer>[];
}

const plainTimes = ({ reached, transitionTimes }: TimesAccumulator): PlainTimes => ({ reached, transitionTimes: transitionTimes.map((list) => list.counted()) });

export const plainGroupTimes = ({ total, byDay }: GroupTimes): PlainGroupTimes => ({ total: plainTimes(total), byDay: byDay.map(plainTimes) });

function mergeTimes(into: TimesAccumulator, from: PlainTimes): void {
  from.reached.forEach((count, k) => (into.reached[k]! += count));
  from.transitionTimes.forEach((times, k) => into.transitionTimes[k]!.append(times));
}

/** Adds another share of a group's users (the same steps and days). */
export function mergeGroupTimes(into: GroupTimes, from: PlainGroupTimes): void {
  mergeTimes(into.total, from.total);
  from.byDay.forEach((day, i) => mergeTimes(into.byDay[i]!, day));
}

/** Counts a path that reached `depth` steps, `completedAt[k]` the time of step k. */
export function add(counts: TimesAccumulator, completedAt: ArrayLike<number>, depth: number, steps: number): void {
  for (let k = 0; k < depth; k++) counts.reached[k]!++;
  for (let k = 1; k < depth; k++) counts.transitionTimes[k]!.push(completedAt[k]! - completedAt[k - 1]!);
  if (depth === steps) counts.transitionTimes[0]!.push(completedAt[steps - 1]! - completedAt[0]!);
}

const addPath = (counts: TimesAccumulator, { completedAt }: FunnelPath, steps: number) => add(counts, completedAt, completedAt.length, steps);

function mean(values: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]!;
  return values.length === 0 ? 0 : Math.round(sum / values.length);
}

/** The `k`-th smallest of `values` (which it reorders): quickselect, much cheaper than a sort of a day's 200k paths. */
function select(values: Float64Array, k: number): number {
  let [low, high] = [0, values.length - 1];
  while (low < high) {
    const pivot = values[(low + high) >>> 1]!;
    let [i, j] = [low, high];
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const swap = values[i]!;
        values[i++] = values[j]!;
        values[j--] = swap;
      }
    }
    if (k <= j) high = j;
    else if (k >= i) low = i;
    else return values[k]!;
  }
  return values[k]!;
}

/** The median of `values`, which it reorders. */
function median(values: Float64Array): number {
  if (values.length === 0) return 0;
  const middle = Math.floor(values.length / 2);
  const upper = select(values, middle);
  if (values.length % 2 === 1) return upper;
  // The selection left the smaller half before `middle`: the lower middle value is its largest.
  let lower = -Infinity;
  for (let i = 0; i < middle; i++) lower = Math.max(lower, values[i]!);
  return Math.round((lower + upper) / 2);
}

const summarized = (times: TimesAccumulator): FunnelCounts => {
  const counted = times.transitionTimes.map((list) => list.counted());
  // Averages before the medians reorder the times.
  const averageTimes = counted.map(mean);
  return { reached: times.reached, medianTimes: counted.map(median), averageTimes };
};

export const summarizedGroup = (groupValue: string, times: GroupTimes): FunnelGroup => ({ groupValue, total: summarized(times.total), byDay: times.byDay.map(summarized) });

const emptyCounts = (steps: number): FunnelCounts => ({ reached: Array<number>(steps).fill(0), medianTimes: Array<number>(steps).fill(0), averageTimes: Array<number>(steps).fill(0) });

/** The conversion window in ms: unordered funnels count whole days (the platform rounds the window down). */
export const windowMsOf = (query: Pick<FunnelQuery, 'mode' | 'windowSeconds'>) => (query.mode === 'unordered' ? Math.floor(query.windowSeconds / 86_400) * 86_400 : query.windowSeconds) * 1000;

/** The first step an event matches: same-time events count in step order. */
const firstStepOf = (query: FunnelQuery) => `CASE ${query.steps.map((_, k) => `WHEN f${k} THEN ${k}`).join(' ')} ELSE ${query.steps.length} END`;

/** The funnel's events with their steps (`mask`: bit k for step k), first step and whether each may enter. */
function stepEventsSql(ctx: RunnerContext, query: FunnelQuery, windowMs: number): string {
  const mask = query.steps.map((_, k) => `${ctx.dialect.integer(`f${k}`)} * ${2 ** k}`).join(' + ');
  return `SELECT *, ${mask} AS mask, ${firstStepOf(query)} AS first_step, f0 AND time < ${query.range.endMs} AS entry FROM (${stepsScan(ctx, query, windowMs)})`;
}

function stepsSql(ctx: RunnerContext, query: FunnelQuery, windowMs: number): string {
  const { dialect } = ctx;
  const list = (value: string) => dialect.orderedList(value, ['time', 'first_step', 'ingest_seq']);
  return `SELECT svc_id, ${list(dialect.double('time'))} AS times, ${list('mask')} AS masks, ${list('entry')} AS entries,
      ${list(dialect.bucketLabel('bucket', 'day'))} AS days, ${list(query.groupBy ? 'p0' : "nullif('', '')")} AS groups
    FROM (${stepEventsSql(ctx, query, windowMs)}) GROUP BY svc_id HAVING ${dialect.anyOf('entry')}`;
}

export async function funnel(ctx: RunnerContext, query: FunnelQuery): Promise<FunnelResult> {
  const days = bucketLabels(query.range, 'day');
  const groups = (await timelineGroups(ctx, query)) ?? (query.mode === 'unordered' ? await unorderedGroups(ctx, query, days) : await chainedGroups(ctx, query, days));
  const ranked = groups.sort((a, b) => b.total.reached[0]! - a.total.reached[0]! || compareText(a.groupValue, b.groupValue));
  const steps = query.steps.length;
  const none = { groupValue: NONE, total: emptyCounts(steps), byDay: days.map(() => emptyCounts(steps)) };
  return { days, groups: query.groupBy ? ranked.slice(0, query.limit) : ranked.length > 0 ? ranked : [none] };
}

/**
 * A funnel's events with their order key `k`: by time, then by the first step they match, so
 * that same-time events count in step order; events of the same time and first step are one
 * moment (neither comes after the other). Sequential funnels number each user's events
 * (`k` = position) because their next step must be the very next event.
 */
function orderedEventsSql(ctx: RunnerContext, query: FunnelQuery, windowMs: number): string {
  const scan = stepsScan(ctx, query, windowMs);
  if (query.mode === 'sequential') return `SELECT *, row_number() OVER (PARTITION BY svc_id ORDER BY time, ${firstStepOf(query)}, ingest_seq) AS k FROM (${scan})`;
  return `SELECT *, time * ${query.steps.length + 1} + ${firstStepOf(query)} AS k FROM (${scan})`;
}

function stepsScan(ctx: RunnerContext, query: FunnelQuery, windowMs: number): string {
  return ctx.dialect.scan({
    appId: ctx.appId,
    timeZone: ctx.timeZone,
    // Later steps may happen after the range, within the window of an entry in it.
    range: { ...query.range, endMs: query.range.endMs + windowMs },
    segment: query.segment,
    properties: query.groupBy ? [query.groupBy] : [],
    interval: 'day',
    flags: query.steps,
    // A sequential funnel needs every event of the user: none may come between two steps.
    flaggedOnly: query.mode !== 'sequential',
  });
}

/**
 * Ordered and sequential funnels in the engine (the dialect's `chainedFunnel`): from every entry
 * (step 1 in the range) the earliest following event of step 2, then of step 3 after it…
 * (sequential: the very next event), which reaches the furthest step any path from that entry
 * can; a user's winning entry is the furthest, then the earliest, and per entry day the same
 * among that day's.
 */
async function chainedGroups(ctx: RunnerContext, query: FunnelQuery, days: string[]): Promise<FunnelGroup[]> {
  const steps = query.steps.length;
  const windowMs = windowMsOf(query);
  const sql = ctx.dialect.chainedFunnel({
    steps,
    windowMs,
    sequential: query.mode === 'sequential',
    entriesEndMs: query.range.endMs,
    grouped: query.groupBy !== undefined,
    events: orderedEventsSql(ctx, query, windowMs),
    stepEvents: stepEventsSql(ctx, query, windowMs),
  });
  const dayIndex = new Map(days.map((day, i) => [day, i]));
  const groups = new Map<string, FunnelGroup>();
  for (const row of await ctx.query(sql)) {
    const value = (row.g as string | null) ?? NONE;
    let group = groups.get(value);
    if (!group) groups.set(value, (group = { groupValue: value, total: emptyCounts(steps), byDay: days.map(() => emptyCounts(steps)) }));
    const summary = (prefix: 'm' | 'a') => Array.from({ length: steps }, (_, k) => Math.round(Number(row[`${prefix}${k}`] ?? 0)));
    const counts: FunnelCounts = { reached: Array.from({ length: steps }, (_, k) => Number(row[`r${k}`])), medianTimes: summary('m'), averageTimes: summary('a') };
    if (row.whole) group.total = counts;
    else {
      const at = dayIndex.get(row.day as string);
      if (at !== undefined) group.byDay[at] = counts;
    }
  }
  return [...groups.values()];
}

/** Unordered funnels: each user's events in JS (funnel-paths.ts), a chunk of users at a time. */
async function unorderedGroups(ctx: RunnerContext, query: FunnelQuery, days: string[]): Promise<FunnelGroup[]> {
  const steps = query.steps.length;
  const windowMs = windowMsOf(query);
  const dayIndex = new Map(days.map((day, i) => [day, i]));
  const groups = new Map<string, GroupTimes>();
  const groupOf = (value: string) => {
    let group = groups.get(value);
    if (!group) groups.set(value, (group = emptyGroupTimes(steps, days.length)));
    return group;
  };
  for await (const rows of ctx.queryChunks(stepsSql(ctx, query, windowMs))) {
    for (const row of rows) {
      const entryFlags = row.entries as boolean[];
      const events: UserEvents = { times: row.times as number[], masks: row.masks as number[], entries: entryFlags.flatMap((entry, i) => (entry ? [i] : [])) };
      const rowGroups = row.groups as (string | null)[];
      const rowDays = row.days as string[];
      const best = bestPath(events, events.entries, steps, windowMs)!;
      // The user counts in the group of the winning entry, on every day it entered.
      addUnorderedUser(groupOf(rowGroups[best.entry] ?? NONE), events, best, (event) => dayIndex.get(rowDays[event]!), steps, windowMs);
    }
  }
  return [...groups].map(([value, group]) => summarizedGroup(value, group));
}

/** Counts a user of an unordered funnel: the winning path over the range, and on each entry day that day's best path. */
export function addUnorderedUser(group: GroupTimes, events: UserEvents, best: FunnelPath, dayOf: (event: number) => number | undefined, steps: number, windowMs: number): void {
  addPath(group.total, best, steps);
  const entriesByDay = new Map<number, number[]>();
  for (const entry of events.entries) {
    const day = dayOf(entry);
    if (day === undefined) continue;
    const entries = entriesByDay.get(day);
    if (entries) entries.push(entry);
    else entriesByDay.set(day, [entry]);
  }
  for (const [day, entries] of entriesByDay) addPath(group.byDay[day]!, bestPath(events, entries, steps, windowMs)!, steps);
}

/**
 * A plain funnel (steps of event types only, no segment, no group-by, no user mappings) from
 * the engine's per-user timelines; undefined when not eligible or when the engine has none
 * ready for the project (the SQL above answers).
 */
async function timelineGroups(ctx: RunnerContext, query: FunnelQuery): Promise<FunnelGroup[] | undefined> {
  const plain = query.steps.every((step) => step.conditions.length === 0 && step.eventType !== 'revenue_amount');
  if (!ctx.timelineFunnel || !plain || query.segment.length > 0 || query.groupBy || ctx.dialect.mapsUsers) return undefined;
  return ctx.timelineFunnel({
    appId: ctx.appId,
    timeZone: ctx.timeZone,
    range: query.range,
    eventTypes: query.steps.map((step) => step.eventType),
    mode: query.mode,
    windowSeconds: query.windowSeconds,
  });
}
