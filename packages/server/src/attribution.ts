// Attribution: a partner's event is attached to the user whose events carry the same
// advertising or vendor id (idfa, idfv, adid, android_app_set_id). Without such a user yet,
// it is held for up to 72 hours and attached when an event with that id arrives; after 72
// hours it is dropped. Known ids and held attributions live in this process.
import type { components } from './generated/ingestion.js';
import type { HandlerRequest, Reply } from './handlers.js';
import { type EventRules, toStoredEvent } from './ingest/events.js';
import type { Store, StoredEvent } from './store/types.js';

type AttributionEvent = components['schemas']['AttributionEvent'];

export const ATTRIBUTION_HOLD_MS = 72 * 3_600_000;
const ID_FIELDS = ['idfa', 'idfv', 'adid', 'android_app_set_id'] as const;

interface Held {
  event: AttributionEvent;
  receivedAt: number;
  /** Attached already (it is held under each of its ids). */
  attached: boolean;
}

const key = (appId: number, field: string, value: string) => `${appId}\u0000${field}\u0000${value}`;

export class AttributionService {
  private readonly users = new Map<string, { user_id: string | null; device_id: string | null }>();
  private readonly held = new Map<string, Held[]>();

  constructor(
    private readonly store: Store,
    private readonly rules: EventRules,
    private readonly holdMs = ATTRIBUTION_HOLD_MS,
  ) {}

  private attach(appId: number, event: AttributionEvent, user: { user_id: string | null; device_id: string | null }, receivedAt: number): StoredEvent {
    const stored = toStoredEvent({ ...event, user_properties: event.user_properties } as never, { appId, receivedAt, remoteAddress: '' }, this.rules);
    return { ...stored, user_id: user.user_id, device_id: user.device_id };
  }

  /** Called with every accepted event batch: learns ids, releases held attributions that match. */
  async observe(events: readonly StoredEvent[], now: number): Promise<void> {
    const released: StoredEvent[] = [];
    for (const event of events) {
      if (event.idfa === null && event.idfv === null && event.adid === null) continue;
      for (const field of ['idfa', 'idfv', 'adid'] as const) {
        const value = event[field];
        if (value === null) continue;
        const k = key(event.app_id, field, value);
        const user = { user_id: event.user_id, device_id: event.device_id };
        this.users.set(k, user);
        for (const held of this.held.get(k) ?? []) {
          if (held.attached || held.receivedAt < now - this.holdMs) continue;
          held.attached = true;
          released.push(this.attach(event.app_id, held.event, user, now));
        }
        this.held.delete(k);
      }
    }
    if (released.length > 0) await this.store.append(released);
  }

  prune(now: number): void {
    for (const [k, list] of this.held) {
      const kept = list.filter((h) => !h.attached && h.receivedAt >= now - this.holdMs);
      if (kept.length === 0) this.held.delete(k);
      else this.held.set(k, kept);
    }
  }

  heldCount(): number {
    return new Set([...this.held.values()].flat().filter((h) => !h.attached)).size;
  }

  handle = async (request: HandlerRequest<'createAttributionEvents'>): Promise<Reply<'createAttributionEvents'>> => {
    const event = (request.body?.event ?? request.query.event) as AttributionEvent | undefined;
    if (!event) return { status: 400, body: { code: 400, error: 'Missing event' } };
    const appId = request.caller.project!.app_id;
    const ids = ID_FIELDS.flatMap((field) => (typeof event[field] === 'string' ? [key(appId, field, event[field] as string)] : []));
    const user = ids.map((k) => this.users.get(k)).find((u) => u !== undefined);
    if (user) await this.store.append([this.attach(appId, event, user, request.receivedAt)]);
    else {
      const held = { event, receivedAt: request.receivedAt, attached: false };
      for (const k of ids) this.held.set(k, [...(this.held.get(k) ?? []), held]);
    }
    return { status: 200, body: { code: 200, events_ingested: 1, server_upload_time: request.receivedAt } };
  };
}
