// `/api/2/events/list`: every event type of the project with its events of the current
// week (Monday 00:00 in the project's zone until now, later-dated events left out).
import { INACTIVE_EVENT_TYPES } from '../../model/query.js';
import { localDateLabel, reportRange } from '../../model/time.js';
import type { RunnerContext } from './context.js';

export interface EventTypeTotal {
  eventType: string;
  totals: number;
  nonActive: boolean;
}

export async function eventTypeTotals(ctx: RunnerContext): Promise<EventTypeTotal[]> {
  const today = localDateLabel(ctx.timeZone, ctx.now());
  const weekday = (new Date(`${today}T00:00:00Z`).getUTCDay() + 6) % 7;
  const monday = new Date(Date.parse(`${today}T00:00:00Z`) - weekday * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
  const week = { ...reportRange(ctx.timeZone, monday, today.replace(/-/g, '')), endMs: ctx.now() + 1 };
  const types = await ctx.query(ctx.dialect.eventTypes(ctx.appId));
  const totals = new Map(
    (await ctx.query(`SELECT event_type, count(*) AS n FROM (${ctx.dialect.scan({ appId: ctx.appId, timeZone: ctx.timeZone, range: week, segment: [], properties: [] })}) GROUP BY event_type`)).map((r) => [r.event_type as string, r.n as number]),
  );
  return types
    .map((r) => r.event_type as string)
    .sort()
    .map((eventType) => ({ eventType, totals: totals.get(eventType) ?? 0, nonActive: INACTIVE_EVENT_TYPES.includes(eventType) }));
}
