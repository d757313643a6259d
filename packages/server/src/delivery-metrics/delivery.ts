// What becomes of a batch after a delivery attempt: delivered on a 2xx answer; discarded on
// a 4xx other than 429 (the destination refuses the data, sending it again would not help);
// otherwise (network error, timeout, 5xx, 429) retried with exponential backoff until the
// batch's expiry, where one last attempt is made before it counts as expired.

export interface RetryPolicy {
  /** Wait before the first retry; each further retry waits twice as long as the one before. */
  firstRetryMs: number;
  /** The longest wait between two attempts. */
  maxRetryMs: number;
  /** A batch not delivered this long after its first event was accepted expires. */
  expiryMs: number;
}

/** The destination's answer to a delivery, or why there was none. */
export type PostResult = { status: number } | { error: string };

export type Outcome = 'delivered' | 'retry' | 'discarded' | 'expired';

export interface Judgement {
  outcome: Outcome;
  /** When to try again (`retry` only). */
  nextAttemptAt?: number;
}

export const backoffMs = (policy: RetryPolicy, attempt: number): number => Math.min(policy.maxRetryMs, policy.firstRetryMs * 2 ** (attempt - 1));

/** Judges the `attempt`-th attempt of a batch expiring at `expiresAt`, answered at `now`. */
export function judge(policy: RetryPolicy, result: PostResult, attempt: number, now: number, expiresAt: number): Judgement {
  if ('status' in result && result.status >= 200 && result.status < 300) return { outcome: 'delivered' };
  if ('status' in result && result.status >= 400 && result.status < 500 && result.status !== 429) return { outcome: 'discarded' };
  if (now >= expiresAt) return { outcome: 'expired' };
  return { outcome: 'retry', nextAttemptAt: Math.min(now + backoffMs(policy, attempt), expiresAt) };
}

/** Consecutive slices of at most `size` items. */
export function inBatches<T>(items: readonly T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  return batches;
}
