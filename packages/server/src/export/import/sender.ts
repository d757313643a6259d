// Sends the import's events to the target: POST /batch (and /groupidentify for group
// identifications). 429, 5xx and failed connections are retried (retrying.ts); a 400 naming
// events (the batch API's partial answer) drops those events, counted under their reason, and
// sends the rest again; a refused key (401, 403, or 400 `Invalid API key`) ends the import with
// a clear error, since no later request can succeed.
import { retryAfterMs, type GroupIdentification, type UploadEvent } from '@svc/client';
import { againOf, ImportError, retried, type RetryOptions } from './retrying.js';

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

/** Indexes of the events a 400 names, with the reason of each. */
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

export class Sender {
  constructor(private readonly options: SenderOptions) {}

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
      // The batch API answers a wrong key with 400 `Invalid API key`, as the platform does.
      if (response.status === 401 || response.status === 403 || (response.status === 400 && /api.key/i.test(error))) {
        throw new ImportError(`${url} answered ${response.status} (${error}): the API key is not one of its projects'`);
      }
      // A silenced device (400 with silenced_events) is told to wait, as a 429 is.
      if (response.status === 400 && Array.isArray(parsed.silenced_events)) return { again: `400 ${error}`.trim(), waitMs: retryAfterMs(response.headers) };
      return againOf(response, error) ?? { status: response.status, body: parsed };
    });
  }

  /** Sends events through /batch: what the target accepted and what it refused, by reason. */
  async sendEvents(events: UploadEvent[]): Promise<SendOutcome> {
    const outcome: SendOutcome = { accepted: 0, skipped: new Map() };
    let pending = events;
    while (pending.length > 0) {
      // min_id_length 1: ids the source stored are taken, whatever their length.
      const answer = await this.post('/batch', JSON.stringify({ api_key: this.options.apiKey, events: pending, options: { min_id_length: 1 } }), 'application/json');
      if (answer.status === 200) {
        outcome.accepted += pending.length;
        return outcome;
      }
      if (answer.status === 413 && pending.length > 1) {
        // Too large a body: each half on its own.
        const half = Math.ceil(pending.length / 2);
        for (const part of [pending.slice(0, half), pending.slice(half)]) {
          const partOutcome = await this.sendEvents(part);
          outcome.accepted += partOutcome.accepted;
          for (const [reason, count] of partOutcome.skipped) add(outcome.skipped, reason, count);
        }
        return outcome;
      }
      const refused = answer.status === 400 ? refusedEvents(answer.body) : new Map<number, string>();
      if (refused.size === 0) {
        add(outcome.skipped, `${answer.status} ${String(answer.body.error ?? '')}`.trim(), pending.length);
        return outcome;
      }
      for (const reason of refused.values()) add(outcome.skipped, reason);
      pending = pending.filter((_, index) => !refused.has(index));
    }
    return outcome;
  }

  /** Sends group identifications through /groupidentify (at most 1000 a request). */
  async sendGroups(identifications: GroupIdentification[]): Promise<SendOutcome> {
    const form = new URLSearchParams({ api_key: this.options.apiKey, identification: JSON.stringify(identifications) });
    const answer = await this.post('/groupidentify', form.toString(), 'application/x-www-form-urlencoded');
    if (answer.status === 200) return { accepted: identifications.length, skipped: new Map() };
    return { accepted: 0, skipped: new Map([[`${answer.status} ${String(answer.body.error ?? '')}`.trim(), identifications.length]]) };
  }
}
