// The limits of cohort exports per project (doc 000): 60 export requests per 10 minutes, 4
// jobs in progress at a time, 500 per calendar month (UTC), and a slot of the 5 concurrent
// reporting requests for as long as a job runs. These counts live in the process's memory:
// they start afresh after a restart (the reporting slot is counted where the reporting limits are).
import { addTo, sumSince, type WindowedCounts } from '../shared/windowed-counts.js';
import type { ReportingLimits } from '../shared/reporting-limits.js';

export interface ExportLimitFigures {
  requestsPerTenMinutes: number;
  jobsInProgress: number;
  requestsPerMonth: number;
}

export const DOCUMENTED_EXPORT_LIMITS: ExportLimitFigures = { requestsPerTenMinutes: 60, jobsInProgress: 4, requestsPerMonth: 500 };

export type ExportAdmission = { done: () => void } | { message: string; retryAfterSeconds: number };

const TEN_MINUTES = 600;

interface ProjectCounts {
  /** Export requests per second of the last ten minutes. */
  requests: WindowedCounts;
  running: number;
  /** `YYYY-MM` and the export requests of that month. */
  month: string;
  inMonth: number;
}

export class CohortExportLimits {
  private readonly projects = new Map<number, ProjectCounts>();
  /** The admission before, which the next one waits for. */
  private previous: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly reporting: ReportingLimits,
    private readonly figures: ExportLimitFigures = DOCUMENTED_EXPORT_LIMITS,
  ) {}

  /**
   * Admits an export request (then `done` when its job has finished) or says which limit refuses
   * it. Admissions take turns: each checks the counts, waits for its reporting slot, then counts
   * itself, and another admission in between would pass the same check.
   */
  admit(appId: number, now: number): Promise<ExportAdmission> {
    const admission = this.previous.then(() => this.admitNext(appId, now));
    this.previous = admission.catch(() => undefined);
    return admission;
  }

  private async admitNext(appId: number, now: number): Promise<ExportAdmission> {
    const second = Math.floor(now / 1000);
    const month = new Date(now).toISOString().slice(0, 7);
    const counts = this.projects.get(appId) ?? { requests: [], running: 0, month, inMonth: 0 };
    if (counts.month !== month) Object.assign(counts, { month, inMonth: 0 });
    const { requestsPerTenMinutes, jobsInProgress, requestsPerMonth } = this.figures;
    if (sumSince(counts.requests, second - TEN_MINUTES) >= requestsPerTenMinutes) {
      return { message: `Rate limit exceeded: at most ${requestsPerTenMinutes} cohort export requests per 10 minutes per project`, retryAfterSeconds: 60 };
    }
    if (counts.running >= jobsInProgress) return { message: `Rate limit exceeded: at most ${jobsInProgress} cohort exports in progress per project`, retryAfterSeconds: 60 };
    if (counts.inMonth >= requestsPerMonth) {
      const next = new Date(now);
      const nextMonth = Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 1);
      return { message: `Rate limit exceeded: at most ${requestsPerMonth} cohort export requests per month per project`, retryAfterSeconds: Math.ceil((nextMonth - now) / 1000) };
    }
    const slot = await this.reporting.admit(appId, 0, now);
    if ('exceeded' in slot) return { message: slot.message, retryAfterSeconds: slot.retryAfterSeconds };
    addTo(counts.requests, second, 1, second - TEN_MINUTES);
    counts.running++;
    counts.inMonth++;
    this.projects.set(appId, counts);
    let finished = false;
    return {
      done: () => {
        if (finished) return;
        finished = true;
        counts.running--;
        slot.release();
      },
    };
  }
}
