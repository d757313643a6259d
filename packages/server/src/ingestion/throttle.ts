// Per-device and per-user rate limits of event uploads: events per second averaged over a
// window (1000 over 30 s), and events per rolling 24 hours counted in one-hour buckets
// (500,000). Counts are per project; a rejected request is not counted. A device still
// over a limit that sends again within `silenceSeconds` of being refused ignores the
// advice to wait and is judged to be spamming: it is silenced (the 400 throttling detail)
// until it stays quiet that long.

import { dataRecord } from '../shared/data-record.js';
import { addTo, sumSince, type WindowedCounts } from '../shared/windowed-counts.js';

export interface ThrottleLimits {
  epsThreshold: number;
  windowSeconds: number;
  dailyLimit: number;
  silenceSeconds: number;
}

/** Counts of one device or user: those of the buckets still inside the window. */
interface Counter {
  /** Events per second. */
  seconds: WindowedCounts;
  /** Events per hour. */
  hours: WindowedCounts;
  lastSeen: number;
  /** When a request of this device or user was last refused (0: never). */
  refusedAt: number;
  /** Events of the request being judged (0 between requests). */
  inRequest: number;
}

const HOURS = 24;
const HOUR_MS = 3_600_000;

export interface ThrottleVerdict {
  throttled_devices: Record<string, number>;
  throttled_users: Record<string, number>;
  exceeded_daily_quota_devices: Record<string, number>;
  exceeded_daily_quota_users: Record<string, number>;
  throttled_events: number[];
  /** Devices over a limit that were refused less than `silenceSeconds` ago. */
  silenced_devices: string[];
  /** Indexes of the events of silenced devices (not in `throttled_events`). */
  silenced_events: number[];
}

interface Identified {
  device_id?: string | null;
  user_id?: string | null;
}

type Kind = 'device' | 'user';
const KINDS: readonly Kind[] = ['device', 'user'];
const idOf = (event: Identified, kind: Kind) => (kind === 'device' ? event.device_id : event.user_id);

/** Counters of one project, by kind, keyed by the id itself (no key strings built per event). */
type ProjectCounters = Record<Kind, Map<string, Counter>>;

export class Throttle {
  private readonly projects = new Map<number, ProjectCounters>();

  constructor(readonly limits: ThrottleLimits) {}

  private countersOf(appId: number): ProjectCounters {
    let counters = this.projects.get(appId);
    if (!counters) this.projects.set(appId, (counters = { device: new Map(), user: new Map() }));
    return counters;
  }

  private static counter(counters: Map<string, Counter>, id: string): Counter {
    let counter = counters.get(id);
    if (!counter) {
      counter = { seconds: [], hours: [], lastSeen: 0, refusedAt: 0, inRequest: 0 };
      counters.set(id, counter);
    }
    return counter;
  }

  /**
   * The counters of the request's ids of one kind, in the order the ids first appear, each
   * with its events of the request in `inRequest`: one lookup per event, no map per request.
   */
  private static touched(counters: Map<string, Counter>, events: Identified[], kind: Kind): { ids: string[]; found: Counter[] } {
    const ids: string[] = [];
    const found: Counter[] = [];
    for (const event of events) {
      const id = idOf(event, kind);
      if (!id) continue;
      const counter = Throttle.counter(counters, id);
      if (counter.inRequest++ > 0) continue;
      ids.push(id);
      found.push(counter);
    }
    return { ids, found };
  }

  /**
   * The verdict on a request if it would push a device or user over a limit (nothing is
   * counted then); otherwise the request's events are counted and undefined returned.
   */
  admit(appId: number, events: Identified[], now: number): ThrottleVerdict | undefined {
    const counters = this.countersOf(appId);
    const touched = { device: Throttle.touched(counters.device, events, 'device'), user: Throttle.touched(counters.user, events, 'user') };
    const windowOldest = Math.floor(now / 1000) - this.limits.windowSeconds;
    const dayOldest = Math.floor(now / HOUR_MS) - HOURS;
    const over = { device: new Set<string>(), user: new Set<string>() };
    const verdict: ThrottleVerdict = {
      throttled_devices: dataRecord(),
      throttled_users: dataRecord(),
      exceeded_daily_quota_devices: dataRecord(),
      exceeded_daily_quota_users: dataRecord(),
      throttled_events: [],
      silenced_devices: [],
      silenced_events: [],
    };
    // Every touched counter's `inRequest` is taken (and reset) here, refused or not.
    const counts: number[] = [];
    for (const kind of KINDS) {
      const { ids, found } = touched[kind];
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        const counter = found[i]!;
        const count = counter.inRequest;
        counter.inRequest = 0;
        counts.push(count);
        const inWindow = sumSince(counter.seconds, windowOldest) + count;
        const inDay = sumSince(counter.hours, dayOldest) + count;
        const rate = inWindow / this.limits.windowSeconds;
        if (rate > this.limits.epsThreshold) {
          (kind === 'device' ? verdict.throttled_devices : verdict.throttled_users)[id] = Math.round(rate * 10) / 10;
          over[kind].add(id);
        }
        if (inDay > this.limits.dailyLimit) {
          (kind === 'device' ? verdict.exceeded_daily_quota_devices : verdict.exceeded_daily_quota_users)[id] = inDay;
          over[kind].add(id);
        }
      }
    }
    if (over.device.size > 0 || over.user.size > 0) return this.refuse(counters, events, over, verdict, now);

    const second = Math.floor(now / 1000);
    const hour = Math.floor(now / HOUR_MS);
    let next = 0;
    for (const kind of KINDS) {
      for (const counter of touched[kind].found) {
        const count = counts[next++]!;
        addTo(counter.seconds, second, count, windowOldest);
        addTo(counter.hours, hour, count, dayOldest);
        counter.lastSeen = now;
      }
    }
    return undefined;
  }

  /** Fills in the event indexes and the silenced devices; records the refusal. */
  private refuse(counters: ProjectCounters, events: Identified[], over: Record<Kind, Set<string>>, verdict: ThrottleVerdict, now: number): ThrottleVerdict {
    const silenced = new Set<string>();
    for (const id of over.device) {
      if (counters.device.get(id)!.refusedAt > now - this.limits.silenceSeconds * 1000) silenced.add(id);
    }
    for (const kind of KINDS) {
      for (const id of over[kind]) Object.assign(Throttle.counter(counters[kind], id), { refusedAt: now, lastSeen: now });
    }
    verdict.silenced_devices = [...silenced];
    events.forEach((event, index) => {
      const device = event.device_id;
      if (device && silenced.has(device)) verdict.silenced_events.push(index);
      else if ((device && over.device.has(device)) || (event.user_id && over.user.has(event.user_id))) verdict.throttled_events.push(index);
    });
    return verdict;
  }

  /** Forgets devices and users not seen for a day. */
  prune(now: number): void {
    for (const counters of this.projects.values()) {
      for (const kind of KINDS) for (const [id, counter] of counters[kind]) if (counter.lastSeen < now - HOURS * HOUR_MS) counters[kind].delete(id);
    }
  }
}
