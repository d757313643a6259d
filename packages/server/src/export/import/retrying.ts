// Requests of the import retried as the platform's clients retry: 429, 5xx and failed
// connections again after an exponential backoff, waiting at least what Retry-After says,
// until an attempt limit after which the import stops with its state kept.
import { retryAfterMs } from '@svc/client';

export interface RetryOptions {
  /** Attempts of one request before the import stops (its state kept for a resumed run). */
  maxAttempts?: number;
  /** The first backoff, ms; doubled per attempt up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Hears each retry: its reason and wait. */
  onRetry?: (reason: string, waitMs: number) => void;
  /** Once aborted, a failed attempt is not tried again: its error passes through. */
  signal?: AbortSignal;
}

/** An error no retry mends (a refused key, a server that keeps failing). */
export class ImportError extends Error {}

/** What an attempt asks for when it is not done: another try, after at least `waitMs`. */
export interface Again {
  again: string;
  waitMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The retry an answer asks for: 429 and 5xx, waiting what its Retry-After says; undefined for any other status. */
export function againOf(response: Response, error: string): Again | undefined {
  if (response.status !== 429 && response.status < 500) return undefined;
  return { again: `${response.status} ${error}`.trim(), waitMs: retryAfterMs(response.headers) };
}

/** The wait before a retry (0 for the first) when the answer says no Retry-After: doubled each time, up to maxBackoffMs. */
export function backoffOf(options: RetryOptions): (retry: number) => number {
  const backoffMs = options.backoffMs ?? 500;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  return (retry) => Math.min(maxBackoffMs, backoffMs * 2 ** retry);
}

/**
 * Runs `attempt` until it returns a result: again after the backoff when it asks for it or
 * fails to connect (an ImportError passes through); `what` names the request in the error.
 */
export async function retried<T>(what: string, options: RetryOptions, attempt: () => Promise<T | Again>): Promise<T> {
  const maxAttempts = options.maxAttempts ?? 10;
  const backoff = backoffOf(options);
  for (let count = 1; ; count++) {
    let again: Again;
    try {
      const outcome = await attempt();
      if (!isAgain(outcome)) return outcome;
      again = outcome;
    } catch (failure) {
      if (failure instanceof ImportError || options.signal?.aborted) throw failure;
      again = { again: `no answer (${(failure as Error).cause ?? (failure as Error).message})` };
    }
    if (count >= maxAttempts) throw new ImportError(`${what}: ${again.again}, ${count} times; the state is kept: run the import again to resume`);
    const delay = Math.max(backoff(count - 1), again.waitMs ?? 0);
    options.onRetry?.(again.again, delay);
    await sleep(delay);
  }
}

function isAgain(outcome: unknown): outcome is Again {
  return typeof outcome === 'object' && outcome !== null && typeof (outcome as Again).again === 'string';
}
