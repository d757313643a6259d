// The session operations: sessions are (user, session_id) with a session_id other than −1
// that hold an active event, dated and bucketed by their start (the session_id), their
// length the last event's time minus the start, at most a day.
import { bucketLabels, type ReportRange } from '../../model/time.js';
import type { Aggregate } from '../../store/dialect.js';
import type { RunnerContext, SeriesResult } from './context.js';

export const MAX_SESSION_MS = 86_400_000;
/** The documented default bins, ms. */
export const DEFAULT_BINS_MS = [0, 3_000, 10_000, 30_000, 60_000, 180_000, 600_000, 1_800_000, 3_600_000, 86_400_000];

function sessionsSql(ctx: RunnerContext, range: ReportRange, daily = false): string {
  const scan = ctx.dialect.scan({ appId: ctx.appId, timeZone: ctx.timeZone, range, segment: [], properties: [], timeColumn: 'session_id' });
  // The bucket is the session's start: computed once per session, after grouping.
  const bucket = daily ? `${ctx.dialect.bucket('day', ctx.timeZone, 'session_id', range.startMs, range.endMs)} AS bucket, ` : '';
  return `SELECT svc_id, session_id, ${bucket}least(max(time) - session_id, ${MAX_SESSION_MS}) AS length_ms
    FROM (${scan}) s WHERE session_id <> -1 GROUP BY svc_id, session_id HAVING ${ctx.dialect.anyOf('active')}`;
}

/**
 * Sessions per bin `[edges[i], edges[i+1])` (ms); labels `<a>s-<b>s`. A bin ending at the cap
 * (one day) holds it too: lengths are capped there, so that it counts the sessions of a day or more.
 */
export async function sessionLengths(ctx: RunnerContext, range: ReportRange, edges: number[]): Promise<{ xValues: string[]; counts: number[] }> {
  const bins = edges.slice(0, -1).map((from, i) => [from, edges[i + 1]!] as const);
  const [row] = await ctx.query(
    `SELECT ${bins.map(([from, to], i) => `${ctx.dialect.countWhere(`length_ms >= ${ctx.dialect.numeral(from)} AND length_ms ${to === MAX_SESSION_MS ? '<=' : '<'} ${ctx.dialect.numeral(to)}`)} AS b${i}`).join(', ')} FROM (${sessionsSql(ctx, range)})`,
  );
  const seconds = (ms: number) => String(Math.round(ms / 1000 * 1000) / 1000);
  return { xValues: bins.map(([from, to]) => `${seconds(from)}s-${seconds(to)}s`), counts: bins.map((_, i) => Number(row?.[`b${i}`] ?? 0)) };
}

/** Per day, and over the whole range (`collapsed`): average session length in seconds, or sessions per active user. */
export async function dailySessions(ctx: RunnerContext, range: ReportRange, measure: 'averageLength' | 'perUser'): Promise<SeriesResult> {
  const xValues = bucketLabels(range, 'day');
  const { dialect } = ctx;
  // The whole range is the row with `whole` set (its bucket NULL).
  const perDay = async (source: string, aggregates: Record<string, Aggregate>, where?: string) =>
    new Map((await ctx.query(dialect.perBucketAndWhole({ source: `(${source})`, interval: 'day', groups: [], aggregates, where }))).map((r) => [r.whole ? null : (r.bucket as string), r]));
  const byBucket = await perDay(sessionsSql(ctx, range, true), { sessions: { kind: 'count' }, total_ms: { kind: 'sum', column: 'length_ms' } });
  const active =
    measure === 'perUser'
      ? await perDay(dialect.scan({ appId: ctx.appId, timeZone: ctx.timeZone, range, segment: [], properties: [], interval: 'day' }), { users: { kind: 'distinct', column: 'svc_id' } }, 'active')
      : undefined;
  const valueOf = (bucket: string | null) => {
    const row = byBucket.get(bucket);
    if (!row || Number(row.sessions) === 0) return 0;
    if (active) return Number(row.sessions) / Number(active.get(bucket)?.users ?? row.sessions);
    return Number(row.total_ms) / Number(row.sessions) / 1000;
  };
  return { xValues, series: [{ groups: [], eventIndex: 0, segmentIndex: 0, values: xValues.map(valueOf), collapsed: valueOf(null) }] };
}
