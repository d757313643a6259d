import { sleep } from './batching.js';

/** Time source of the paced helpers; tests pass a fake one. */
export interface Clock {
  /** Milliseconds on a monotonic-enough scale (default `Date.now()`). */
  now(): number;
  /** Resolves after `ms` milliseconds; rejects with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = { now: () => Date.now(), sleep };

/**
 * Spaces the starts of requests at least `intervalMs` apart, in the order they ask: each call
 * reserves the next free start time (synchronously, so concurrent callers never share one) and
 * resolves at that time.
 */
export function createPacer(intervalMs: number, clock: Clock): (signal?: AbortSignal) => Promise<void> {
  let nextStart = -Infinity;
  return async (signal) => {
    signal?.throwIfAborted();
    const now = clock.now();
    const start = Math.max(now, nextStart);
    nextStart = start + intervalMs;
    if (start > now) await clock.sleep(start - now, signal);
  };
}
