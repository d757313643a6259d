// The fetch under openapi-fetch: one call's attempts, their timeouts, the waits between them
// and what the logger is told. openapi-fetch builds the Request (middleware included) and
// parses the final answer; this only decides whether to send the Request again.
import { ConnectionError, TimeoutError, retryAfterMs } from './errors.js';
import { maskBody, maskHeaders, maskUrl, type Logger } from './logging.js';
import type { Clock } from './pacing.js';

/** First backoff cap; it doubles with each retry up to `MAX_BACKOFF_MS`. */
export const INITIAL_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 8_000;
/** A `Retry-After` longer than this is not waited for: the answer is handed back instead. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Answers after which a retryable request is sent again: 408 (the shared `RequestTimeout`
 * answer says "retry it"), 429 and every 5xx. 409 is not: the specs document it as a conflict
 * (or "the export has not completed: poll its status"), never as worth repeating.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/** Full jitter: a uniformly random wait between 0 and min(8 s, 0.5 s × 2^retry) (`retry` from 0). */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  return random() * Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** retry);
}

export interface AttemptPolicy {
  /** What the errors name, e.g. `GET /api/3/cohorts`. */
  action: string;
  /** Whether the request may be sent again at all (idempotent method or an event upload). */
  retryable: boolean;
  maxRetries: number;
  timeout: number;
  fetch: (request: Request) => Promise<Response>;
  clock: Clock;
  logger: Logger | undefined;
}

/**
 * A fetch that sends the Request, and again after a retryable answer or a failed connection
 * (up to `maxRetries` times, waiting `Retry-After` or the backoff); rejects with
 * `TimeoutError` / `ConnectionError` when the last attempt got no answer, and with the
 * signal's reason when the caller aborts.
 */
export function attemptingFetch(policy: AttemptPolicy): (request: Request) => Promise<Response> {
  const { action, logger, clock } = policy;
  return async (request) => {
    const url = maskUrl(request.url);
    const where = { method: request.method, url };
    if (logger?.debug) {
      const body = request.body ? maskBody(await request.clone().text()) : undefined;
      logger.debug(`${request.method} ${url}`, { ...where, headers: maskHeaders(request.headers), ...(body ? { body } : {}) });
    }
    const retries = policy.retryable ? policy.maxRetries : 0;
    for (let attempt = 1; ; attempt++) {
      const started = Date.now();
      let response: Response | undefined;
      let failure: ConnectionError | undefined;
      try {
        response = await attemptOnce(policy, attempt <= retries ? request.clone() : request);
      } catch (error) {
        if (request.signal.aborted) throw request.signal.reason;
        failure = error instanceof ConnectionError ? error : new ConnectionError(action, error);
      }
      const outcome = response
        ? { ...where, attempt, status: response.status, ms: Date.now() - started, requestId: response.headers.get('x-request-id') ?? undefined }
        : { ...where, attempt, error: failure!.message, ms: Date.now() - started };
      logger?.debug?.(`${request.method} ${url}: ${response ? `HTTP ${response.status}` : failure!.name}`, outcome);

      if (!response || isRetryableStatus(response.status)) {
        const wait = response ? retryAfterMs(response.headers) : undefined;
        if (attempt <= retries && (wait === undefined || wait <= MAX_RETRY_AFTER_MS)) {
          const delay = wait ?? backoffMs(attempt - 1);
          await response?.body?.cancel().catch(() => undefined);
          logger?.warn?.(`${request.method} ${url}: retry ${attempt} of ${retries} in ${Math.round(delay)} ms`, { ...outcome, delayMs: delay });
          await clock.sleep(delay, request.signal);
          continue;
        }
      }
      if (failure) {
        logger?.error?.(`${request.method} ${url} failed: ${failure.message}`, outcome);
        throw failure;
      }
      if (!response!.ok) logger?.error?.(`${request.method} ${url} failed: HTTP ${response!.status}`, outcome);
      return response!;
    }
  };
}

/** One attempt, failing with `TimeoutError` when no answer comes within `timeout` ms. */
async function attemptOnce(policy: AttemptPolicy, request: Request): Promise<Response> {
  if (!Number.isFinite(policy.timeout)) return policy.fetch(request);
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new TimeoutError(policy.action, policy.timeout);
      controller.abort(error);
      reject(error);
    }, policy.timeout);
  });
  try {
    const signal = AbortSignal.any([request.signal, controller.signal]);
    return await Promise.race([policy.fetch(new Request(request, { signal })), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
