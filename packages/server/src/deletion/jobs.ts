// Deletion jobs (doc 001): one job per project and day collects the users to delete while it
// is `Staging`; at 00:00 UTC of its day it is `Submitted` and its users are scrubbed; 5 days
// after the scrub (backups cleared) it is `Done`.

export type JobStatus = 'Staging' | 'Submitted' | 'Done';

/** Days from a job's first request to its day (the day it begins). */
export const STAGING_DAYS = 3;
/** Days from the scrub until the backups are cleared. */
export const BACKUP_DAYS = 5;

export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
export const addDays = (day: string, days: number) => utcDay(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000);

export interface StoredJob {
  appId: number;
  day: string;
  /** The day the scrub finished; null until it has run. */
  scrubbedOn: string | null;
}

export function statusOf(job: StoredJob, today: string): JobStatus {
  if (today < job.day) return 'Staging';
  if (job.scrubbedOn !== null && today >= addDays(job.scrubbedOn, BACKUP_DAYS)) return 'Done';
  return 'Submitted';
}

/** The day of a new job for a request made `today`. */
export const dayOfNewJob = (today: string) => addDays(today, STAGING_DAYS);
