// Sends the import's events to the target: POST /batch through @svc/client's uploadEvents (and
// /groupidentify for group identifications). 429, 5xx, failed connections and a silenced
// device are retried with the import's backoff, waiting at least what Retry-After says; when
// the retries give up, the import stops with its state kept. A 400 naming events (the batch
// API's partial answer) drops those events, counted under their reason, and sends the rest
// again; a refused key (401, 403, or 400 `Invalid API key`) ends the import with a clear error,
// since no later request can succeed.
import { createIngestClient, RETRY_STATUSES, uploadEvents, type GroupIdentification, type IngestClient, type UploadEvent, type UploadFailure } from '@svc/client';
import { againOf, backoffOf, ImportError, retried, type RetryOptions } from './retrying.js';

export interface SendOutcome {
  /** Events the target acknowledged (stored, or already stored under their insert_id). */
  accepted: number;
  /** Events dropped, by reason. */
  skipped: Map<string, number>;
}

export interface SenderOptions extends RetryOptions {
  url: string;
  apiKey: string;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** Positions of the events a 400 names in the request it answers, with the reason of each. */
function refusedEvents(body: Record<string, unknown>): Map<number, string> {
  const refused = new Map<number, string>();
  for (const [key, kind] of [
    ['events_with_invalid_fields', 'invalid'],
    ['events_with_missing_fields', 'missing'],
  ] as const) {
    const byField = body[key];
    if (typeof byField !== 'object' || byField === null) continue;
    for (const [field, indexes] of Object.entries(byField)) {
      if (Array.isArray(indexes)) for (const index of indexes) if (!refused.has(index)) refused.set(index, `${kind} ${field}`);
    }
  }
  return refused;
}

const add = (counts: Map<string, number>, reason: string, count = 1) => counts.set(reason, (counts.get(reason) ?? 0) + count);

/** A refused key: 401, 403, or the batch API's 400 `Invalid API key`, as the platform answers it. */
const refusesKey = (status: number | null, error: string) => status === 401 || status === 403 || (status === 400 && /api.key/i.test(error));

export class Sender {
  private readonly client: IngestClient;

  constructor(private readonly options: SenderOptions) {
    this.client = createIngestClient({ apiKey: options.apiKey, baseUrl: options.url });
  }

  /** One request, retried until it is answered with neither 429 nor 5xx. */
  private post(path: string, body: string, contentType: string): Promise<Answer> {
    const url = `${this.options.url}${path}`;
    return retried(url, this.options, async () => {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });
      const text = await response.text();
      const parsed = (() => {
        try {
          return JSON.parse(text) as Record<string, unknown>;
        } catch {
          return { error: text.slice(0, 200) };
        }
      })();
      const error = String(parsed.error ?? '');
      if (refusesKey(response.status, error)) throw this.keyRefused(url, response.status, error);
      return againOf(response, error) ?? { status: response.status, body: parsed };
    });
  }

  private keyRefused(url: string, status: number, error: string): ImportError {
    return new ImportError(`${url} answered ${status} (${error}): the API key is not one of its projects'`);
  }

  /** Sends events through /batch: what the target accepted and what it refused, by reason. */
  async sendEvents(events: UploadEvent[]): Promise<SendOutcome> {
    const { maxAttempts = 10, onRetry } = this.options;
    const summary = await uploadEvents(this.client, events, {
      // Ids the source stored are taken, whatever their length.
      min_id_length: 1,
      resendValid: true,
      retrySilenced: true,
      maxRetries: maxAttempts - 1,
      retryDelayMs: backoffOf(this.options),
      onRetry: ({ status, error }, waitMs) => onRetry?.(status === null ? 'no answer' : `${status} ${String((error as { error?: unknown } | undefined)?.error ?? '')}`.trim(), waitMs),
    });
    const outcome: SendOutcome = { accepted: events.length, skipped: new Map() };
    for (const failure of summary.failures) {
      outcome.accepted -= failure.eventCount;
      this.countFailure(failure, outcome.skipped);
    }
    return outcome;
  }

  /** A failure's events counted under their reasons; a refused key or a retry that gave up stops the import. */
  private countFailure(failure: UploadFailure, skipped: Map<string, number>): void {
    const url = `${this.options.url}/batch`;
    const body = typeof failure.error === 'object' && failure.error !== null ? (failure.error as Record<string, unknown>) : {};
    const error = String(body.error ?? '');
    if (refusesKey(failure.status, error)) throw this.keyRefused(url, failure.status!, error);
    if (failure.status === null || RETRY_STATUSES.has(failure.status) || Array.isArray(body.silenced_events)) {
      const reason = failure.status === null ? `no answer (${(failure.error as Error).cause ?? (failure.error as Error).message})` : `${failure.status} ${error}`.trim();
      throw new ImportError(`${url}: ${reason}, ${failure.attempts} times; the state is kept: run the import again to resume`);
    }
    // The events the 400 names, in the order of their positions in the request it answered.
    const reasons = [...refusedEvents(body)].sort(([a], [b]) => a - b).map(([, reason]) => reason);
    if (reasons.length === failure.eventCount) for (const reason of reasons) add(skipped, reason);
    else add(skipped, `${failure.status} ${error}`.trim(), failure.eventCount);
  }

  /** Sends group identifications through /groupidentify (at most 1000 a request). */
  async sendGroups(identifications: GroupIdentification[]): Promise<SendOutcome> {
    const form = new URLSearchParams({ api_key: this.options.apiKey, identification: JSON.stringify(identifications) });
    const answer = await this.post('/groupidentify', form.toString(), 'application/x-www-form-urlencoded');
    if (answer.status === 200) return { accepted: identifications.length, skipped: new Map() };
    return { accepted: 0, skipped: new Map([[`${answer.status} ${String(answer.body.error ?? '')}`.trim(), identifications.length]]) };
  }
}
