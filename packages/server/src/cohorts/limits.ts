// The limits of cohort exports per project (doc 000): 60 export requests per 10 minutes, 4
// jobs in progress at a time, 500 per calendar month (UTC), and a slot of the 5 concurrent
// reporting requests for as long as a job runs. Counts live in memory: they start afresh
// after a restart.
import { addTo, sumSince } from '../ingest/windowed-counts.js';
import type { ReportingLimits } from '../reporting/limits.js';

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
  seconds: number[];
  requests: number[];
  running: number;
  /** `YYYY-MM` and the export requests of that month. */
  month: string;
  inMonth: number;
}

export class CohortExportLimits {
  private readonly projects = new Map<number, ProjectCounts>();

  constructor(
    private readonly reporting: ReportingLimits,
    private readonly figures: ExportLimitFigures = DOCUMENTED_EXPORT_LIMITS,
  ) {}

  /** Admits an export request (then `done` when its job has finished) or says which limit refuses it. */
  admit(appId: number, now: number): ExportAdmission {
    const second = Math.floor(now / 1000);
    const month = new Date(now).toISOString().slice(0, 7);
    const counts = this.projects.get(appId) ?? { seconds: [], requests: [], running: 0, month, inMonth: 0 };
    if (counts.month !== month) Object.assign(counts, { month, inMonth: 0 });
    const { requestsPerTenMinutes, jobsInProgress, requestsPerMonth } = this.figures;
    if (sumSince(counts.seconds, counts.requests, second - TEN_MINUTES) >= requestsPerTenMinutes) {
      return { message: `Rate limit exceeded: at most ${requestsPerTenMinutes} cohort export requests per 10 minutes per project`, retryAfterSeconds: 60 };
    }
    if (counts.running >= jobsInProgress) return { message: `Rate limit exceeded: at most ${jobsInProgress} cohort exports in progress per project`, retryAfterSeconds: 60 };
    if (counts.inMonth >= requestsPerMonth) {
      const next = new Date(now);
      const nextMonth = Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 1);
      return { message: `Rate limit exceeded: at most ${requestsPerMonth} cohort export requests per month per project`, retryAfterSeconds: Math.ceil((nextMonth - now) / 1000) };
    }
    const slot = this.reporting.admit(appId, 0, now);
    if ('exceeded' in slot) return { message: slot.message, retryAfterSeconds: slot.retryAfterSeconds };
    addTo(counts.seconds, counts.requests, second, 1, second - TEN_MINUTES);
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
