// The reporting limits per project (doc 001): 5 requests at a time across the reporting
// endpoints (cohort downloads share them), and a cost budget of 1000 per five minutes and
// 108,000 per hour, where a query's cost is days × conditions × the cost of its type.
// Counted in this process's memory (InMemoryReportingLimits), or in PostgreSQL for every
// process of a deployment (store/postgres/reporting-limits.ts).
import { addTo, sumSince, type WindowedCounts } from './windowed-counts.js';
import { takeSlots } from './running-slots.js';

export interface LimitFigures {
  concurrentRequests: number;
  costPerFiveMinutes: number;
  costPerHour: number;
}

export const DOCUMENTED_LIMITS: LimitFigures = { concurrentRequests: 5, costPerFiveMinutes: 1000, costPerHour: 108_000 };

export type ExceededLimit = 'concurrent_requests' | 'concurrent_cost' | 'hourly_cost';

export type Refusal = { exceeded: ExceededLimit; message: string; retryAfterSeconds: number };

export type Admission = { release: () => void } | Refusal;

export interface ReportingLimits {
  /** Admits a request of `cost` (0 for requests that only take a slot) at `now` (ms) or says which limit refuses it. */
  admit(appId: number, cost: number, now: number): Promise<Admission>;
}

export const FIVE_MINUTES = 300;
export const HOUR = 3600;

/** What a project has in use: requests running, cost spent in the last five minutes and hour. */
export interface InUse {
  running: number;
  lastFiveMinutes: number;
  lastHour: number;
}

/** The limit that refuses one more request of `cost`, if any. */
export function refusal(figures: LimitFigures, inUse: InUse, cost: number): Refusal | undefined {
  const { concurrentRequests, costPerFiveMinutes, costPerHour } = figures;
  const { running, lastFiveMinutes, lastHour } = inUse;
  if (running >= concurrentRequests) {
    return { exceeded: 'concurrent_requests', message: `Too many concurrent requests: at most ${concurrentRequests} reporting requests at a time per project`, retryAfterSeconds: 1 };
  }
  if (lastFiveMinutes + cost > costPerFiveMinutes) {
    return { exceeded: 'concurrent_cost', message: `Cost limit: this query costs ${cost}; at most ${costPerFiveMinutes} per five minutes per project (${lastFiveMinutes} spent)`, retryAfterSeconds: FIVE_MINUTES };
  }
  if (lastHour + cost > costPerHour) {
    return { exceeded: 'hourly_cost', message: `Cost limit: this query costs ${cost}; at most ${costPerHour} per hour per project (${lastHour} spent)`, retryAfterSeconds: HOUR };
  }
  return undefined;
}

/** The limits of one server process: N processes allow N times them. */
export class InMemoryReportingLimits implements ReportingLimits {
  private readonly running = new Map<number, number>();
  /** Costs spent per second, per project. */
  private readonly spent = new Map<number, WindowedCounts>();

  constructor(readonly figures: LimitFigures = DOCUMENTED_LIMITS) {}

  async admit(appId: number, cost: number, now: number): Promise<Admission> {
    const second = Math.floor(now / 1000);
    const spent = this.spent.get(appId) ?? [];
    const inUse = {
      running: this.running.get(appId) ?? 0,
      lastFiveMinutes: sumSince(spent, second - FIVE_MINUTES),
      lastHour: sumSince(spent, second - HOUR),
    };
    const refused = refusal(this.figures, inUse, cost);
    if (refused) return refused;
    addTo(spent, second, cost, second - HOUR);
    this.spent.set(appId, spent);
    return { release: takeSlots(this.running, appId) };
  }
}

/** days × conditions × type cost (conditions: segment conditions, at least 1). */
export function queryCost(days: number, segmentConditions: number, typeCost: number): number {
  return days * Math.max(1, segmentConditions) * typeCost;
}
