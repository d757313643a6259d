// The streamer: every round it cuts each destination's new events (read from the store, past
// its persisted cursor) into batches and posts the batches that are due, recording every
// attempt. Rounds run one at a time, every `pollIntervalMs`, and whenever `round()` is called.
// Deliveries are signed as Standard Webhooks says (with the destination's signing secret).
import { signWebhook } from '@svc/client';
import type { StreamDestination, Tenancy } from '../shared/tenancy.js';
import { judge, type PostResult, type RetryPolicy } from './delivery.js';
import type { PendingBatch, StreamStore } from './store.js';

export interface StreamingOptions {
  pollIntervalMs: number;
  /** Events per webhook request. */
  batchSize: number;
  /** Events cut into batches per destination and round (the rest waits for the next round). */
  maxEventsPerRound: number;
  requestTimeoutMs: number;
  retry: RetryPolicy;
}

export const DEFAULT_STREAMING: StreamingOptions = {
  pollIntervalMs: 1_000,
  batchSize: 500,
  maxEventsPerRound: 10_000,
  requestTimeoutMs: 30_000,
  retry: { firstRetryMs: 10_000, maxRetryMs: 10 * 60_000, expiryMs: 4 * 3_600_000 },
};

/** A destination with its project. */
export type Destination = StreamDestination & { app_id: number };

/** Every project's destinations, as the tenancy file has them now. */
export const destinationsOf = (tenancy: Tenancy): Destination[] => tenancy.projects.flatMap((p) => (p.stream_destinations ?? []).map((d) => ({ ...d, app_id: p.app_id })));

/** Sends a JSON body to a webhook. */
export type Poster = (url: string, body: string, headers: Record<string, string>, timeoutMs: number) => Promise<PostResult>;

export const postWithFetch: Poster = async (url, body, headers, timeoutMs) => {
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return { status: response.status };
  } catch (error) {
    return { error: (error as Error).message };
  }
};

/** An event as the webhook receives it: the stored fields that have a value, with `svc_id`. */
function streamedEvent(stored: Record<string, unknown>): Record<string, unknown> {
  const event: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [field, value] of Object.entries(stored)) if (value !== null && field !== 'seq' && field !== 'ingest_seq') event[field] = value;
  return event;
}

/**
 * The Standard Webhooks headers of a delivery: its id (the same on every attempt, so a receiver
 * can drop repeats), the time of this attempt, and the signature of both with the body.
 */
function signedHeaders(secret: string, id: string, atMs: number, body: string): Record<string, string> {
  const timestamp = Math.floor(atMs / 1000);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secret, id, timestamp, body) };
}

export class EventStreamer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: StreamStore,
    private readonly destinations: () => Destination[],
    private readonly clock: () => number,
    private readonly options: StreamingOptions,
    private readonly log: (message: string) => void,
    private readonly post: Poster = postWithFetch,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.round(), this.options.pollIntervalMs);
    this.timer.unref();
  }

  /** One round after the ones under way; failures are logged and the round's work tried again next time. */
  round(): Promise<void> {
    this.running = this.running.then(() =>
      Promise.all(this.destinations().map((destination) => this.stream(destination).catch((error: Error) => this.log(`streaming to destination ${destination.sync_id} failed (tried again next round): ${error.message}`)))).then(() => undefined),
    );
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private async stream(destination: Destination): Promise<void> {
    const selection = { syncId: destination.sync_id, appId: destination.app_id, eventTypes: destination.event_types, since: destination.created_at };
    await this.store.cutBatches(selection, this.options.batchSize, this.options.maxEventsPerRound, this.options.retry.expiryMs);
    for (const batch of await this.store.dueBatches(destination.sync_id, this.clock())) await this.attempt(destination, batch);
  }

  private async attempt(destination: Destination, batch: PendingBatch): Promise<void> {
    const events = (await this.store.batchEvents(batch.batchId)).map(streamedEvent);
    const attempt = batch.attempts + 1;
    const attemptedAt = this.clock();
    const body = JSON.stringify({ events });
    const headers: Record<string, string> = { 'x-svc-sync-id': destination.sync_id, 'x-svc-batch-id': String(batch.batchId), 'x-svc-attempt': String(attempt) };
    if (destination.signing_secret) Object.assign(headers, signedHeaders(destination.signing_secret, `msg_${destination.sync_id}_${batch.batchId}`, attemptedAt, body));
    const result = await this.post(destination.url, body, headers, this.options.requestTimeoutMs);
    const answeredAt = this.clock();
    const judgement = judge(this.options.retry, result, attempt, answeredAt, batch.expiresAt);
    await this.store.recordAttempt({
      batchId: batch.batchId,
      syncId: destination.sync_id,
      attempt,
      attemptedAt,
      answeredAt,
      events: events.length,
      outcome: judgement.outcome,
      status: 'status' in result ? result.status : null,
      error: 'error' in result ? result.error : null,
      nextAttemptAt: judgement.nextAttemptAt ?? null,
    });
  }
}
