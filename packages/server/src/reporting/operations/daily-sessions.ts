// What getAverageSessionLength and getAverageSessionsPerUser share: one measure of the
// sessions per day and over the range (runners/sessions.ts `dailySessions`), in one answer shape.
import type { RunnerContext } from '../runners/context.js';
import { queryCost } from '../../shared/reporting-limits.js';
import { dailySessions } from '../runners/sessions.js';
import { days, EVENT_TYPE_COST, range } from './parameters.js';

export type DailySessionsQuery = { start: string; end: string };

export const dailySessionsParameters = (request: { query: object }) => request.query as DailySessionsQuery;

export const dailySessionsCost = ({ start, end }: DailySessionsQuery) => queryCost(days(start, end), 0, EVENT_TYPE_COST);

export async function dailySessionsReply(ctx: RunnerContext, { start, end }: DailySessionsQuery, measure: 'averageLength' | 'perUser') {
  const result = await dailySessions(ctx, range(ctx.timeZone, start, end, 'day'), measure);
  const data = { series: result.series.map((s) => s.values), seriesCollapsed: result.series.map((s) => [s.collapsed]), seriesLabels: [0], seriesMeta: [{ segmentIndex: 0 }], xValues: result.xValues };
  return { status: 200 as const, body: { data } };
}
