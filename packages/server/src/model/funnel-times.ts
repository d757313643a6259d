// A funnel's counting, shared by the reporting runner (SQL and JS paths) and the engine's
// per-user timelines: the query's shape, the step times of each group while paths are counted,
// and their medians and averages.
import { bestPath, type FunnelPath, type UserEvents } from './funnel-paths.js';
import type { EventSelector, PropertyRef, Segment } from './query.js';
import type { ReportRange } from './time.js';

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
 * were large objects of V8's heap, each growth garbage for a full collection.
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

export const emptyCounts = (steps: number): FunnelCounts => ({ reached: Array<number>(steps).fill(0), medianTimes: Array<number>(steps).fill(0), averageTimes: Array<number>(steps).fill(0) });

/** The conversion window in ms: unordered funnels count whole days (the platform rounds the window down). */
export const windowMsOf = (query: Pick<FunnelQuery, 'mode' | 'windowSeconds'>) => (query.mode === 'unordered' ? Math.floor(query.windowSeconds / 86_400) * 86_400 : query.windowSeconds) * 1000;

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
