// `/api/2/funnels`: per user the winning path (funnel-paths.ts) over the events of the steps,
// read from the engine a chunk of users at a time; counted per group value (`g` on the
// winning entry's event) and per entry day (the best path entering that day).
import { bestPath, type FunnelMode, type FunnelPath, type UserEvents } from '../funnel-paths.js';
import { type EventSelector, NONE, type PropertyRef, type Segment } from '../query/model.js';
import { bucketLabels, type ReportRange } from '../time.js';
import type { RunnerContext } from './context.js';

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
  /** Per transition k (1..steps-1), the times users took from step k to k+1; index 0: the whole funnel. */
  transitionTimes: number[][];
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

const emptyCounts = (steps: number): FunnelCounts => ({ reached: Array<number>(steps).fill(0), transitionTimes: Array.from({ length: steps }, () => []) });

function add(counts: FunnelCounts, path: FunnelPath, steps: number): void {
  const { completedAt } = path;
  for (let k = 0; k < completedAt.length; k++) counts.reached[k]!++;
  for (let k = 1; k < completedAt.length; k++) counts.transitionTimes[k]!.push(completedAt[k]! - completedAt[k - 1]!);
  if (completedAt.length === steps) counts.transitionTimes[0]!.push(completedAt[steps - 1]! - completedAt[0]!);
}

function stepsSql(ctx: RunnerContext, query: FunnelQuery, windowMs: number): string {
  const steps = query.steps.length;
  const scan = ctx.dialect.scan({
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
  const mask = query.steps.map((_, k) => `(f${k}::INTEGER << ${k})`).join(' + ');
  const firstStep = `CASE ${query.steps.map((_, k) => `WHEN f${k} THEN ${k}`).join(' ')} ELSE ${steps} END`;
  const order = 'ORDER BY time, first_step, ingest_seq';
  return `SELECT svc_id, list(time::DOUBLE ${order}) AS times, list(mask ${order}) AS masks, list(f0 AND time < ${query.range.endMs} ${order}) AS entries,
      list(${ctx.dialect.bucketLabel('bucket', 'day')} ${order}) AS days, list(${query.groupBy ? 'p0' : 'NULL::VARCHAR'} ${order}) AS groups
    FROM (SELECT *, ${mask} AS mask, ${firstStep} AS first_step FROM (${scan})) GROUP BY svc_id HAVING bool_or(f0 AND time < ${query.range.endMs})`;
}

export async function funnel(ctx: RunnerContext, query: FunnelQuery): Promise<FunnelResult> {
  const steps = query.steps.length;
  const days = bucketLabels(query.range, 'day');
  const dayIndex = new Map(days.map((day, i) => [day, i]));
  // Unordered funnels count whole days (the platform rounds the window down).
  const windowMs = (query.mode === 'unordered' ? Math.floor(query.windowSeconds / 86_400) * 86_400 : query.windowSeconds) * 1000;
  const groups = new Map<string, FunnelGroup>();
  const groupOf = (value: string) => {
    let group = groups.get(value);
    if (!group) groups.set(value, (group = { groupValue: value, total: emptyCounts(steps), byDay: days.map(() => emptyCounts(steps)) }));
    return group;
  };
  for await (const rows of ctx.queryChunks(stepsSql(ctx, query, windowMs))) {
    for (const row of rows) {
      const entryFlags = row.entries as boolean[];
      const events: UserEvents = { times: row.times as number[], masks: row.masks as number[], entries: entryFlags.flatMap((entry, i) => (entry ? [i] : [])) };
      const rowGroups = row.groups as (string | null)[];
      const rowDays = row.days as string[];
      const best = bestPath(events, events.entries, steps, windowMs, query.mode)!;
      // The user counts in the group of the winning entry, on every day it entered.
      const group = groupOf(rowGroups[best.entry] ?? NONE);
      add(group.total, best, steps);
      const entriesByDay = new Map<string, number[]>();
      for (const entry of events.entries) entriesByDay.set(rowDays[entry]!, [...(entriesByDay.get(rowDays[entry]!) ?? []), entry]);
      for (const [day, entries] of entriesByDay) {
        const path = bestPath(events, entries, steps, windowMs, query.mode)!;
        const at = dayIndex.get(day);
        if (at !== undefined) add(group.byDay[at]!, path, steps);
      }
    }
  }
  const ranked = [...groups.values()].sort((a, b) => b.total.reached[0]! - a.total.reached[0]! || a.groupValue.localeCompare(b.groupValue));
  return { days, groups: query.groupBy ? ranked.slice(0, query.limit) : ranked.length > 0 ? ranked : [groupOf(NONE)] };
}
