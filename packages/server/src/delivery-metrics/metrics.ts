// The delivery metrics summary: the request window (preset or custom, with the look-back
// threshold) and the figures computed from the settled outcomes of delivery attempts.
import { instant } from '../model/time.js';
import type { components } from '../generated/delivery-metrics.js';

type Summary = components['schemas']['DeliveryMetricsSummary'];
type TimePeriod = components['schemas']['TimePeriod'];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** How far back metrics may be asked for (the platform keeps them 90 days). */
export const LOOK_BACK_MS = 90 * DAY;

const PRESETS = new Map<string, number>([
  ['TEN_MINUTES', 10 * MINUTE],
  ['ONE_HOUR', HOUR],
  ['FOUR_HOURS', 4 * HOUR],
  ['ONE_DAY', DAY],
  ['ONE_WEEK', 7 * DAY],
  ['TWO_WEEKS', 14 * DAY],
]);

export interface Window {
  start: number;
  end: number;
}

export type WindowProblem = { status: 400 | 500; error: string };

/**
 * The window of a request at `now`: a preset ends at `now` rounded down to the minute;
 * CUSTOM runs from `start` to `end` (the spec's query schema has required both and their
 * format), which must be in order and within the look-back threshold.
 */
export function requestWindow(query: { time_period?: TimePeriod; start?: string; end?: string }, now: number): Window | WindowProblem {
  const preset = PRESETS.get(query.time_period ?? '');
  if (preset !== undefined) {
    const end = now - (now % MINUTE);
    return { start: end - preset, end };
  }
  const start = instant(query.start!);
  const end = instant(query.end!);
  if (!(end > start)) return { status: 400, error: `end ${query.end} must be later than start ${query.start}` };
  const threshold = now - LOOK_BACK_MS;
  for (const [name, text, at] of [['start', query.start, start], ['end', query.end, end]] as const) {
    if (at < threshold) return { status: 500, error: `${name} ${text} lies beyond the look-back threshold of ${LOOK_BACK_MS / DAY} days` };
  }
  return { start, end };
}

/** `2022-10-01 06:00:00.000000`: UTC, as the platform writes the window. */
export function platformTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000`;
}

/** Events whose fate was settled in the window, by outcome. */
export interface SettledEvents {
  deliveredFirstAttempt: number;
  deliveredAfterRetry: number;
  expired: number;
  discarded: number;
  /** 95th percentile (nearest rank) of the delivered events' latencies, ms; null without any. */
  p95LatencyMs: number | null;
}

export function summarize(timePeriod: TimePeriod, window: Window, settled: SettledEvents): Summary {
  const delivered = settled.deliveredFirstAttempt + settled.deliveredAfterRetry;
  const notDelivered = settled.expired + settled.discarded;
  return {
    timePeriod,
    eventsDelivered: delivered,
    eventsNotDelivered: notDelivered,
    deliveryRate: delivered + notDelivered === 0 ? null : delivered / (delivered + notDelivered),
    latencyInSeconds: settled.p95LatencyMs === null ? null : settled.p95LatencyMs / 1000,
    timePeriodStart: platformTime(window.start),
    timePeriodEnd: platformTime(window.end),
    successOnFirstAttempt: settled.deliveredFirstAttempt,
    successAfterRetry: settled.deliveredAfterRetry,
    eventsExpired: settled.expired,
    eventsDiscarded: settled.discarded,
  };
}
