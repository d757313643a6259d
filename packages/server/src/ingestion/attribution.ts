// Attribution: a partner's event is attached to the user whose events carry the same
// advertising or vendor id (idfa, idfv, adid, android_app_set_id). Without such a user yet,
// it is held for up to 72 hours and attached when an event with that id arrives; after 72
// hours it is dropped. Holds and their ends go through the journal (a 200 means the hold
// is durable); at start the known ids of the last 72 hours and the holds still within 72
// hours are read back from the store.
import { randomUUID } from 'node:crypto';
import type { components } from '../generated/ingestion.js';
import type { HandlerRequest, Reply } from '../http/operations.js';
import { type EventRules, toStoredEvent } from '../model/events.js';
import { ADVERTISING_ID_FIELDS, carriesAdvertisingId, type JournalRecord, type Store, type StoredEvent } from '../store/types.js';

type AttributionEvent = components['schemas']['AttributionEvent'];

export const ATTRIBUTION_HOLD_MS = 72 * 3_600_000;

interface Held {
  id: string;
  event: AttributionEvent;
  receivedAt: number;
  /** Attached already (it is held under each of its ids). */
  attached: boolean;
}

interface Carrier {
  user_id: string | null;
  device_id: string | null;
  seenAt: number;
}

const key = (appId: number, field: string, value: string) => `${appId}\u0000${field}\u0000${value}`;

const idKeys = (appId: number, event: AttributionEvent) =>
  ADVERTISING_ID_FIELDS.flatMap((field) => (typeof event[field] === 'string' ? [key(appId, field, event[field] as string)] : []));

export class AttributionService {
  private readonly carriers = new Map<string, Carrier>();
  private readonly held = new Map<string, Held[]>();

  constructor(
    private readonly store: Store,
    private readonly rules: EventRules,
    private readonly holdMs = ATTRIBUTION_HOLD_MS,
  ) {}

  /** Reads back the known ids and the holds of the last `holdMs` (at start, after the journal replay). */
  async rebuild(now: number): Promise<void> {
    for (const known of await this.store.knownAdvertisingIds(now - this.holdMs)) {
      this.carriers.set(key(known.app_id, known.field, known.value), { user_id: known.user_id, device_id: known.device_id, seenAt: known.seen_at });
    }
    for (const held of await this.store.heldAttributions(now - this.holdMs)) {
      this.hold(held.app_id, { id: held.id, event: held.event as AttributionEvent, receivedAt: held.received_at, attached: false });
    }
  }

  private hold(appId: number, held: Held): void {
    for (const k of idKeys(appId, held.event)) this.held.set(k, [...(this.held.get(k) ?? []), held]);
  }

  private attach(appId: number, event: AttributionEvent, carrier: Carrier, receivedAt: number): StoredEvent {
    const stored = toStoredEvent({ ...event, user_properties: event.user_properties } as never, { appId, receivedAt, remoteAddress: '' }, this.rules);
    return { ...stored, user_id: carrier.user_id, device_id: carrier.device_id };
  }

  /** Called with every accepted event batch: learns ids, releases held attributions that match. */
  async observe(events: readonly StoredEvent[], now: number): Promise<void> {
    const released: JournalRecord[] = [];
    for (const event of events) {
      if (!carriesAdvertisingId(event)) continue;
      for (const field of ADVERTISING_ID_FIELDS) {
        const value = event[field];
        if (value === null) continue;
        const k = key(event.app_id, field, value);
        const carrier = { user_id: event.user_id, device_id: event.device_id, seenAt: now };
        this.carriers.set(k, carrier);
        for (const held of this.held.get(k) ?? []) {
          if (held.attached || held.receivedAt < now - this.holdMs) continue;
          held.attached = true;
          released.push({ ...this.attach(event.app_id, held.event, carrier, now), released_attribution: held.id });
        }
        this.held.delete(k);
      }
    }
    if (released.length > 0) await this.store.append(released);
  }

  /** Drops holds older than `holdMs` and forgets ids not seen for as long. */
  prune(now: number): void {
    const oldest = now - this.holdMs;
    for (const [k, list] of this.held) {
      const kept = list.filter((h) => !h.attached && h.receivedAt >= oldest);
      if (kept.length === 0) this.held.delete(k);
      else this.held.set(k, kept);
    }
    for (const [k, carrier] of this.carriers) if (carrier.seenAt < oldest) this.carriers.delete(k);
  }

  heldCount(): number {
    return new Set([...this.held.values()].flat().filter((h) => !h.attached)).size;
  }

  handle = async (request: HandlerRequest<'createAttributionEvents'>): Promise<Reply<'createAttributionEvents'>> => {
    const event = (request.body?.event ?? request.query.event) as AttributionEvent | undefined;
    if (!event) return { status: 400, body: { code: 400, error: 'Missing event' } };
    const appId = request.caller.project!.app_id;
    const oldest = request.receivedAt - this.holdMs;
    const carrier = idKeys(appId, event)
      .map((k) => this.carriers.get(k))
      .find((c) => c !== undefined && c.seenAt >= oldest);
    if (carrier) await this.store.append([this.attach(appId, event, carrier, request.receivedAt)]);
    else {
      // Held in memory before the journal write: an event arriving meanwhile releases it,
      // and its release line follows the hold line in the journal.
      const held: Held = { id: randomUUID(), event, receivedAt: request.receivedAt, attached: false };
      this.hold(appId, held);
      try {
        await this.store.append([{ held_attribution: { id: held.id, app_id: appId, received_at: held.receivedAt, event: event as Record<string, unknown> } }]);
      } catch (failure) {
        held.attached = true; // not durable, not acknowledged: never released
        throw failure;
      }
    }
    return { status: 200, body: { code: 200, events_ingested: 1, server_upload_time: request.receivedAt } };
  };
}
