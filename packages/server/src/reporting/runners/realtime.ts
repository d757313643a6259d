// `/api/2/realtime`: users with an active event per five-minute interval of today and of
// yesterday (the project's local days), today's up to the interval that holds now.
import { bucketLabels, localDateLabel, minute5Label, reportRange } from '../../model/time.js';
import type { RunnerContext } from './context.js';
import { counts } from './counts.js';

export interface RealtimeActiveUsers {
  /** The day's intervals, `HH:mm` local wall time. */
  times: string[];
  today: number[];
  yesterday: number[];
}

const DAY_MS = 86_400_000;
const INTERVALS_PER_DAY = 288;

export async function realtimeActiveUsers(ctx: RunnerContext): Promise<RealtimeActiveUsers> {
  const now = ctx.now();
  const today = localDateLabel(ctx.timeZone, now);
  // Calendar arithmetic in UTC: the day before a local date, whatever the zone's offsets.
  const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
  const range = reportRange(ctx.timeZone, yesterday.replace(/-/g, ''), today.replace(/-/g, ''));
  const scan = { appId: ctx.appId, timeZone: ctx.timeZone, range, selector: { eventType: '_active', conditions: [] }, segment: [], properties: [], interval: 'minute5' as const };
  const { perBucket } = await counts(ctx, scan, 'uniques');
  const users = new Map(perBucket.map((row) => [row.bucket, row.value]));
  // Every local day has 288 labels (a skipped wall hour included, a repeated one once).
  const labels = bucketLabels(range, 'minute5');
  const yesterdayLabels = labels.slice(0, INTERVALS_PER_DAY);
  const todayLabels = labels.slice(INTERVALS_PER_DAY);
  const elapsed = todayLabels.indexOf(minute5Label(ctx.timeZone, now)) + 1;
  return {
    times: todayLabels.map((label) => label.slice(11, 16)),
    today: todayLabels.slice(0, elapsed).map((label) => users.get(label) ?? 0),
    yesterday: yesterdayLabels.map((label) => users.get(label) ?? 0),
  };
}
