// The delivery metrics limits per project (doc 001): 4 requests at a time and 12 per minute.
// Counts live in memory.
import { addTo, firstBucketSince, sumSince, type WindowedCounts } from '../shared/windowed-counts.js';
import { takeSlots } from '../shared/running-slots.js';

export interface MetricsLimitFigures {
  concurrentRequests: number;
  requestsPerMinute: number;
}

export const DOCUMENTED_METRICS_LIMITS: MetricsLimitFigures = { concurrentRequests: 4, requestsPerMinute: 12 };

export type MetricsAdmission = { release: () => void } | { retryAfterSeconds: number };

const MINUTE = 60;

export class MetricsLimits {
  private readonly running = new Map<number, number>();
  private readonly requests = new Map<number, WindowedCounts>();

  constructor(readonly figures: MetricsLimitFigures = DOCUMENTED_METRICS_LIMITS) {}

  admit(appId: number, now: number): MetricsAdmission {
    const running = this.running.get(appId) ?? 0;
    if (running >= this.figures.concurrentRequests) return { retryAfterSeconds: 1 };
    const second = Math.floor(now / 1000);
    const made = this.requests.get(appId) ?? [];
    if (sumSince(made, second - MINUTE) >= this.figures.requestsPerMinute) {
      // The oldest request of the minute leaves it first.
      const oldest = firstBucketSince(made, second - MINUTE)!;
      return { retryAfterSeconds: Math.max(1, oldest + MINUTE - second) };
    }
    addTo(made, second, 1, second - MINUTE);
    this.requests.set(appId, made);
    return { release: takeSlots(this.running, appId) };
  }
}
