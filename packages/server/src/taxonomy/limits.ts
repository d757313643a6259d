// The taxonomy API's limits per project (doc 000): a cost per request (GET 1; POST, PUT and
// DELETE 2), at most 4 cost running at a time and 7200 cost per hour. Counts live in memory.
import { addTo, sumSince, type WindowedCounts } from '../shared/windowed-counts.js';
import { takeSlots } from '../shared/running-slots.js';

export interface TaxonomyLimitFigures {
  concurrentCost: number;
  costPerHour: number;
}

export const DOCUMENTED_TAXONOMY_LIMITS: TaxonomyLimitFigures = { concurrentCost: 4, costPerHour: 7200 };

export type TaxonomyAdmission = { release: () => void } | { message: string; retryAfterSeconds: number };

const HOUR = 3600;

export const taxonomyCost = (method: 'get' | 'post' | 'put' | 'delete') => (method === 'get' ? 1 : 2);

export class TaxonomyLimits {
  private readonly running = new Map<number, number>();
  private readonly spent = new Map<number, WindowedCounts>();

  constructor(private readonly figures: TaxonomyLimitFigures = DOCUMENTED_TAXONOMY_LIMITS) {}

  admit(appId: number, cost: number, now: number): TaxonomyAdmission {
    const running = this.running.get(appId) ?? 0;
    if (running + cost > this.figures.concurrentCost) return { message: `Too many concurrent requests: at most ${this.figures.concurrentCost} cost of taxonomy requests at a time per project`, retryAfterSeconds: 1 };
    const second = Math.floor(now / 1000);
    const spent = this.spent.get(appId) ?? [];
    const lastHour = sumSince(spent, second - HOUR);
    if (lastHour + cost > this.figures.costPerHour) {
      return { message: `Rate limit exceeded for this endpoint: at most ${this.figures.costPerHour} cost of taxonomy requests per hour per project`, retryAfterSeconds: HOUR };
    }
    addTo(spent, second, cost, second - HOUR);
    this.spent.set(appId, spent);
    return { release: takeSlots(this.running, appId, cost) };
  }
}
