// Doc 002: "a user updating properties more than 1800 times per hour is rate limited;
// events are still ingested but property updates may be dropped". Counted per project
// and user (the device for events without a user) over a rolling hour in one-minute
// buckets; an update beyond the limit leaves the profile as it is, and its event is
// stored with `skip_user_properties_sync` set, saying that the profile did not take it.
// The counts live in memory: a restart starts a new hour.
import type { StoredEvent } from '../store/types.js';
import { addTo, sumSince, type WindowedCounts } from '../shared/windowed-counts.js';

interface Updates {
  /** Updates per minute. */
  counts: WindowedCounts;
  lastSeen: number;
}

const MINUTE_MS = 60_000;
const WINDOW_MINUTES = 60;

/** Whether an accepted event updates the user profile (only `$identify` events do here). */
export const updatesUserProfile = (event: StoredEvent): boolean =>
  event.event_type === '$identify' && event.user_properties !== null && !event.skip_user_properties_sync;

export class PropertyUpdateLimit {
  private readonly projects = new Map<number, Map<string, Updates>>();

  constructor(readonly limits: { perHour: number }) {}

  /** Counts the profile updates of accepted events; marks those beyond the limit as not synced. */
  apply(events: StoredEvent[], now: number): void {
    const minute = Math.floor(now / MINUTE_MS);
    const oldest = minute - WINDOW_MINUTES;
    for (const event of events) {
      if (!updatesUserProfile(event)) continue;
      const id = event.user_id ?? event.device_id;
      if (id === null) continue;
      const updates = this.updatesOf(event.app_id, id);
      updates.lastSeen = now;
      if (sumSince(updates.counts, oldest) >= this.limits.perHour) event.skip_user_properties_sync = true;
      else addTo(updates.counts, minute, 1, oldest);
    }
  }

  private updatesOf(appId: number, id: string): Updates {
    let project = this.projects.get(appId);
    if (!project) this.projects.set(appId, (project = new Map()));
    let updates = project.get(id);
    if (!updates) project.set(id, (updates = { counts: [], lastSeen: 0 }));
    return updates;
  }

  /** Forgets users without updates in the last hour. */
  prune(now: number): void {
    for (const project of this.projects.values()) for (const [id, updates] of project) if (updates.lastSeen < now - WINDOW_MINUTES * MINUTE_MS) project.delete(id);
  }
}
