import { retryAfterMs } from './errors.js';

/** What one request answered: `data` for a 2xx, `error` (the parsed body) otherwise. */
export interface SendOutcome<D, E> {
  status: number;
  data?: D;
  error?: E;
  /** The answer's headers: a `Retry-After` among them sets the wait before a retry. */
  headers?: Headers;
}

/** A part of the input that could not be delivered. */
export interface BatchFailure<E> {
  /** HTTP status of the last answer; `null` when the last attempt failed without an answer (network error). */
  status: number | null;
  /** The parsed error body of the last answer, or the thrown error of a network failure. */
  error: E | unknown;
  /** Zero-based indexes into the caller's input of the items this failure covers. */
  indexes: number[];
  /** Requests made for these items, retries included. */
  attempts: number;
}

export interface BatchRunOptions {
  concurrency: number;
  maxRetries: number;
  /** The wait before a retry when the answer says no `Retry-After`: fixed, or by retry (0 first). */
  retryDelayMs: number | ((retry: number) => number);
  /** Answers retried besides 429 and 5xx (e.g. a silenced device's 400). */
  retryable?: ((outcome: SendOutcome<unknown, unknown>) => boolean) | undefined;
  /** Hears each retry before its wait: the answer (undefined after a network error) and the wait. */
  onRetry?: ((outcome: SendOutcome<unknown, unknown> | undefined, waitMs: number) => void) | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Positions in the batch of the items an answer refuses on their own (a 400 naming them):
   * they become a failure of their own and the rest of the batch is sent again. Undefined or
   * empty: the answer is the whole batch's.
   */
  refusedItems?: (outcome: SendOutcome<unknown, unknown>) => number[] | undefined;
}

/** Statuses answered after which the same request is sent again (after `retryDelayMs`). */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Greedy split of items into consecutive batches of at most `maxCount` items whose serialized
 * size (`envelopeBytes` + item sizes + one comma between items) stays within `maxBytes`.
 * An item larger than the limit on its own gets a batch of its own.
 */
export function planBatches(sizes: readonly number[], maxCount: number, maxBytes: number, envelopeBytes: number): number[][] {
  const batches: number[][] = [];
  let current: number[] = [];
  let bytes = envelopeBytes;
  sizes.forEach((size, index) => {
    const added = current.length === 0 ? size : size + 1;
    if (current.length > 0 && (current.length >= maxCount || bytes + added > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = envelopeBytes;
    }
    bytes += current.length === 0 ? size : size + 1;
    current.push(index);
  });
  if (current.length > 0) batches.push(current);
  return batches;
}

export function batchBytes(indexes: readonly number[], sizes: readonly number[], envelopeBytes: number): number {
  let bytes = envelopeBytes + Math.max(0, indexes.length - 1);
  for (const i of indexes) bytes += sizes[i] ?? 0;
  return bytes;
}

/**
 * Sends batches with bounded concurrency. A 413 answer splits the batch in halves that are sent
 * (and split further) on their own; 429, 5xx and network errors are retried up to `maxRetries`
 * times, after the answer's `Retry-After` or else `retryDelayMs`; items an answer refuses on their own (`refusedItems`) fail alone
 * and the rest is sent again. Never throws for HTTP or network errors (they become failures);
 * rethrows only when `signal` aborts.
 */
export async function runBatches<D, E>(
  batches: number[][],
  send: (indexes: number[]) => Promise<SendOutcome<D, E>>,
  options: BatchRunOptions,
  onSuccess: (indexes: number[], data: D | undefined) => void,
): Promise<{ requests: number; failures: BatchFailure<E>[] }> {
  let requests = 0;
  const failures: BatchFailure<E>[] = [];
  const { signal } = options;

  async function deliver(indexes: number[]): Promise<void> {
    let attempts = 0;
    for (;;) {
      signal?.throwIfAborted();
      attempts++;
      requests++;
      let outcome: SendOutcome<D, E> | undefined;
      let thrown: unknown;
      try {
        outcome = await send(indexes);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        thrown = error;
      }
      if (outcome && outcome.status >= 200 && outcome.status < 300) {
        onSuccess(indexes, outcome.data);
        return;
      }
      const refused = outcome && options.refusedItems?.(outcome as SendOutcome<unknown, unknown>)?.filter((position) => position >= 0 && position < indexes.length);
      if (outcome && refused && refused.length > 0) {
        const positions = new Set(refused);
        failures.push({ status: outcome.status, error: outcome.error, indexes: indexes.filter((_, position) => positions.has(position)), attempts });
        const rest = indexes.filter((_, position) => !positions.has(position));
        if (rest.length > 0) await deliver(rest);
        return;
      }
      if (outcome?.status === 413 && indexes.length > 1) {
        const middle = Math.ceil(indexes.length / 2);
        await deliver(indexes.slice(0, middle));
        await deliver(indexes.slice(middle));
        return;
      }
      const retryable = outcome === undefined || RETRY_STATUSES.has(outcome.status) || options.retryable?.(outcome as SendOutcome<unknown, unknown>) === true;
      if (retryable && attempts <= options.maxRetries) {
        const delay = typeof options.retryDelayMs === 'number' ? options.retryDelayMs : options.retryDelayMs(attempts - 1);
        const wait = retryAfterMs(outcome?.headers) ?? delay;
        options.onRetry?.(outcome as SendOutcome<unknown, unknown> | undefined, wait);
        await sleep(wait, signal);
        continue;
      }
      failures.push({
        status: outcome ? outcome.status : null,
        error: outcome ? outcome.error : thrown,
        indexes,
        attempts,
      });
      return;
    }
  }

  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(options.concurrency, batches.length)) }, async () => {
    while (next < batches.length) {
      const batch = batches[next++]!;
      await deliver(batch);
    }
  });
  await Promise.all(workers);
  failures.sort((a, b) => (a.indexes[0] ?? 0) - (b.indexes[0] ?? 0));
  return { requests, failures };
}

/** Validates an integer option: `min` ≤ value, clamped to `max`. */
export function intOption(value: number | undefined, fallback: number, name: string, min: number, max = Infinity): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) throw new RangeError(`${name} must be an integer ≥ ${min}`);
  return Math.min(value, max);
}
