import { batchBytes, intOption, planBatches, runBatches, type BatchFailure, type SendOutcome } from './batching.js';
import { injectedApiKey, lenient, type IngestClient } from './clients.js';
import { utf8Length } from './serialize.js';
import type {
  ErrorBody,
  EventRecord,
  InvalidUploadError,
  SilencedUploadError,
  ThrottledUploadError,
  UploadOptions,
  UploadSuccess,
} from './types.js';

/** Most events the upload operations accept per request. */
export const MAX_EVENTS_PER_REQUEST = 2000;
/** Largest upload request body, in bytes (20 MB, counted as 20,000,000 to stay under either reading). */
export const MAX_UPLOAD_BYTES = 20_000_000;

export interface UploadEventsOptions {
  /** Operation to send to; default `/batch`. */
  path?: '/batch' | '/2/httpapi';
  /** Upload options sent with every request (`options.min_id_length`). */
  min_id_length?: UploadOptions['min_id_length'];
  /** Events per request, at most (and default) 2000. */
  maxEventsPerRequest?: number;
  /** Serialized request body size per request in bytes, at most (and default) 20,000,000. */
  maxBytesPerRequest?: number;
  /** Requests in flight at once; default 1. */
  concurrency?: number;
  /** Retries of one request after 429, 5xx or a network error; default 3. */
  maxRetries?: number;
  /**
   * Wait before a retry in milliseconds when the answer says no `Retry-After` (which is
   * waited for instead): fixed, or by retry (0 for the first, e.g. an exponential backoff); default 15000.
   */
  retryDelayMs?: number | ((retry: number) => number);
  /** `true`: a 400 for a silenced device (`silenced_events`) is retried as a 429 is; default `false`: it fails. */
  retrySilenced?: boolean;
  /** Hears each retry before its wait: the status answered (`null` after a network error), its error body, and the wait in ms. */
  onRetry?: (answer: { status: number | null; error?: UploadErrorBody | undefined }, waitMs: number) => void;
  /** Aborts the upload: pending requests are cancelled and the returned promise rejects. */
  signal?: AbortSignal;
  /**
   * `true`: a 400 naming events (`events_with_invalid_fields`, `events_with_missing_fields`)
   * fails those events alone and sends the others of the request again; default `false`: the
   * whole request's events fail, as the service refused them.
   */
  resendValid?: boolean;
}

/** Positions of the events a 400 names as invalid or missing fields. */
function namedEvents(outcome: { status: number; error?: unknown }): number[] | undefined {
  if (outcome.status !== 400 || typeof outcome.error !== 'object' || outcome.error === null) return undefined;
  const body = outcome.error as InvalidUploadError;
  const named = new Set<number>();
  for (const byField of [body.events_with_invalid_fields, body.events_with_missing_fields]) {
    for (const positions of Object.values(byField ?? {})) for (const position of positions ?? []) if (Number.isInteger(position)) named.add(position);
  }
  return [...named];
}

/** A 400 for a silenced device: its events are refused for now, not for what they hold. */
function isSilenced(outcome: { status: number; error?: unknown }): boolean {
  return outcome.status === 400 && typeof outcome.error === 'object' && outcome.error !== null && Array.isArray((outcome.error as SilencedUploadError).silenced_events);
}

/** Body of an error answer of the upload operations. */
export type UploadErrorBody = InvalidUploadError | SilencedUploadError | ThrottledUploadError | ErrorBody;

export interface UploadFailure extends BatchFailure<UploadErrorBody> {
  /** Number of events covered by this failure (`indexes.length`). */
  eventCount: number;
}

export interface UploadEventsSummary {
  /** HTTP requests made, retries and split halves included. */
  requests: number;
  /** Sum of `events_ingested` of the accepted requests. */
  eventsIngested: number;
  /** Serialized body bytes of the accepted requests. */
  payloadBytes: number;
  /** Serialized body bytes of every request sent, retries included. */
  bytesSent: number;
  /** Events that were not accepted, by the request that failed last; empty when all were. */
  failures: UploadFailure[];
}

/**
 * Uploads any number of events: splits them into requests of at most 2000 events and 20 MB
 * (measured on the serialized body), halves a batch answered with 413 and sends each half,
 * retries after 429 (and 5xx or network errors) up to `maxRetries` times, after the answer's
 * `Retry-After` or else `retryDelayMs`.
 *
 * HTTP and network errors do not throw: they end up in `failures`, with the indexes of the
 * events concerned, so the caller can resend exactly those. The promise rejects only when
 * `options.signal` aborts.
 */
export async function uploadEvents(
  client: IngestClient,
  events: readonly EventRecord[],
  options: UploadEventsOptions = {},
): Promise<UploadEventsSummary> {
  const path = options.path ?? '/batch';
  const maxCount = intOption(options.maxEventsPerRequest, MAX_EVENTS_PER_REQUEST, 'maxEventsPerRequest', 1, MAX_EVENTS_PER_REQUEST);
  const maxBytes = intOption(options.maxBytesPerRequest, MAX_UPLOAD_BYTES, 'maxBytesPerRequest', 1, MAX_UPLOAD_BYTES);
  const concurrency = intOption(options.concurrency, 1, 'concurrency', 1);
  const maxRetries = intOption(options.maxRetries, 3, 'maxRetries', 0);
  const retryDelayMs = typeof options.retryDelayMs === 'function' ? options.retryDelayMs : intOption(options.retryDelayMs, 15_000, 'retryDelayMs', 0);
  const uploadOptions: UploadOptions | undefined =
    options.min_id_length !== undefined ? { min_id_length: options.min_id_length } : undefined;

  // The body the client sends is `{"api_key":…,"events":[…],"options":…}`; its size is the
  // envelope plus the events and the commas between them.
  const apiKey = injectedApiKey(client) ?? '';
  const envelopeBytes = utf8Length(
    JSON.stringify({ api_key: apiKey, events: [], ...(uploadOptions ? { options: uploadOptions } : {}) }),
  );
  const sizes = events.map((event) => utf8Length(JSON.stringify(event)));
  const batches = planBatches(sizes, maxCount, maxBytes, envelopeBytes);

  const summary: UploadEventsSummary = { requests: 0, eventsIngested: 0, payloadBytes: 0, bytesSent: 0, failures: [] };
  const send = async (indexes: number[]): Promise<SendOutcome<UploadSuccess, UploadErrorBody>> => {
    summary.bytesSent += batchBytes(indexes, sizes, envelopeBytes);
    const init = {
      body: { events: indexes.map((i) => events[i]!), ...(uploadOptions ? { options: uploadOptions } : {}) },
      ...(options.signal ? { signal: options.signal } : {}),
      // runBatches retries (and halves after 413) itself.
      maxRetries: 0,
    };
    const ingest = lenient(client);
    const { data, error, response } =
      path === '/batch' ? await ingest.POST('/batch', init) : await ingest.POST('/2/httpapi', init);
    return { status: response.status, data, error: error as UploadErrorBody | undefined, headers: response.headers };
  };
  const { requests, failures } = await runBatches(
    batches,
    send,
    {
      concurrency,
      maxRetries,
      retryDelayMs,
      signal: options.signal,
      ...(options.resendValid ? { refusedItems: namedEvents } : {}),
      ...(options.retrySilenced ? { retryable: isSilenced } : {}),
      ...(options.onRetry ? { onRetry: (outcome: { status: number; error?: unknown } | undefined, waitMs: number) => options.onRetry!({ status: outcome?.status ?? null, error: outcome?.error as UploadErrorBody | undefined }, waitMs) } : {}),
    },
    (indexes, data) => {
      summary.eventsIngested += data?.events_ingested ?? indexes.length;
      summary.payloadBytes += batchBytes(indexes, sizes, envelopeBytes);
    },
  );
  summary.requests = requests;
  summary.failures = failures.map((failure) => ({ ...failure, eventCount: failure.indexes.length }));
  return summary;
}
