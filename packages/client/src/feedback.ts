import { intOption, planBatches, runBatches, type BatchFailure, type SendOutcome } from './batching.js';
import { lenient, type AppClient } from './clients.js';
import { utf8Length } from './serialize.js';
import type { ErrorBody, FeedbackIngestResult, FeedbackItem, FeedbackItemError, ValidationError } from './types.js';

/** Most items the feedback operation accepts per request. */
export const MAX_FEEDBACK_ITEMS_PER_REQUEST = 100;
/** Largest feedback request body, in bytes (5 MB, counted as 5,000,000). */
export const MAX_FEEDBACK_BYTES = 5_000_000;

export interface IngestFeedbackOptions {
  /** Items per request, at most (and default) 100. */
  maxItemsPerRequest?: number;
  /** Serialized request body size in bytes, at most (and default) 5,000,000. */
  maxBytesPerRequest?: number;
  /** Requests in flight at once; default 1. */
  concurrency?: number;
  /** Retries of one request after 429, 5xx or a network error; default 3. */
  maxRetries?: number;
  /** Wait before each retry in milliseconds; default 15000. */
  retryDelayMs?: number;
  signal?: AbortSignal;
}

export type FeedbackErrorBody = ValidationError | ErrorBody;

export interface FeedbackFailure extends BatchFailure<FeedbackErrorBody> {
  /** Number of items covered (`indexes.length`). */
  itemCount: number;
}

export interface IngestFeedbackSummary {
  /** HTTP requests made, retries and split halves included. */
  requests: number;
  /** Sum of `ingested` over the answered requests. */
  ingested: number;
  /** Sum of `failed` over the answered requests (items refused one by one). */
  failed: number;
  /** Concatenated `errors` of the answered requests. */
  errors: FeedbackItemError[];
  /** Requests refused as a whole (400, 401, 403, 404, 413 of a single item, …), with the item indexes. */
  failures: FeedbackFailure[];
}

/**
 * Ingests any number of feedback items into one source, in requests of at most 100 items and
 * 5 MB; sums `ingested`, `failed` and `errors`. Same error policy as `uploadEvents`: no
 * exception for HTTP or network errors (see `failures`), 413 halves, 429/5xx retried.
 */
export async function ingestFeedback(
  client: AppClient,
  sourceId: string,
  items: readonly FeedbackItem[],
  options: IngestFeedbackOptions = {},
): Promise<IngestFeedbackSummary> {
  const maxCount = intOption(options.maxItemsPerRequest, MAX_FEEDBACK_ITEMS_PER_REQUEST, 'maxItemsPerRequest', 1, MAX_FEEDBACK_ITEMS_PER_REQUEST);
  const maxBytes = intOption(options.maxBytesPerRequest, MAX_FEEDBACK_BYTES, 'maxBytesPerRequest', 1, MAX_FEEDBACK_BYTES);
  const envelopeBytes = utf8Length(JSON.stringify({ source_id: sourceId, items: [] }));
  const sizes = items.map((item) => utf8Length(JSON.stringify(item)));
  const batches = planBatches(sizes, maxCount, maxBytes, envelopeBytes);

  const summary: IngestFeedbackSummary = { requests: 0, ingested: 0, failed: 0, errors: [], failures: [] };
  const send = async (indexes: number[]): Promise<SendOutcome<FeedbackIngestResult, FeedbackErrorBody>> => {
    const { data, error, response } = await lenient(client).POST('/api/1/ai-feedback/ingest', {
      body: { source_id: sourceId, items: indexes.map((i) => items[i]!) },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return { status: response.status, data, error: error as FeedbackErrorBody | undefined };
  };
  const { requests, failures } = await runBatches(
    batches,
    send,
    {
      concurrency: intOption(options.concurrency, 1, 'concurrency', 1),
      maxRetries: intOption(options.maxRetries, 3, 'maxRetries', 0),
      retryDelayMs: intOption(options.retryDelayMs, 15_000, 'retryDelayMs', 0),
      signal: options.signal,
    },
    (_indexes, data) => {
      summary.ingested += data?.ingested ?? 0;
      summary.failed += data?.failed ?? 0;
      summary.errors.push(...(data?.errors ?? []));
    },
  );
  summary.requests = requests;
  summary.failures = failures.map((failure) => ({ ...failure, itemCount: failure.indexes.length }));
  return summary;
}
