// `/api/2/funnels`: per user the winning path over the events of the steps, counted per group
// value (`g` on the winning entry's event) and per entry day (the best path entering that
// day). Ordered and sequential funnels are computed by the engine (the dialect's
// `chainedFunnel`: chains of "next matching event" joins, or each user's event lists walked
// with array functions); unordered ones by funnel-paths.ts over each user's events, read a
// chunk of users at a time. Plain funnels are answered from the engine's per-user timelines
// when it keeps them (store/timelines/funnel.ts), with the same answers; the counting itself is
// model/funnel-times.ts.
import { bestPath, type UserEvents } from '../../model/funnel-paths.js';
import { addUnorderedUser, emptyCounts, emptyGroupTimes, type FunnelCounts, type FunnelGroup, type FunnelQuery, type FunnelResult, type GroupTimes, summarizedGroup, windowMsOf } from '../../model/funnel-times.js';
import { NONE } from '../../model/query.js';
import { bucketLabels } from '../../model/time.js';
import { compareText, type RunnerContext } from './context.js';

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
