// Per-device and per-user rate limits of event uploads: events per second averaged over a
// window (1000 over 30 s), and events per rolling 24 hours counted in one-hour buckets
// (500,000). Counts are per project; a rejected request is not counted. A device still
// over a limit that sends again within `silenceSeconds` of being refused ignores the
// advice to wait and is judged to be spamming: it is silenced (the 400 throttling detail)
// until it stays quiet that long.

export interface ThrottleLimits {
  epsThreshold: number;
  windowSeconds: number;
  dailyLimit: number;
  silenceSeconds: number;
}

/** Counts of one device or user: (bucket, count) pairs of the buckets still inside the window. */
interface Counter {
  seconds: number[];
  secondCounts: number[];
  hours: number[];
  hourCounts: number[];
  lastSeen: number;
  /** When a request of this device or user was last refused (0: never). */
  refusedAt: number;
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

export class Throttle {
  private readonly counters = new Map<string, Counter>();

  constructor(readonly limits: ThrottleLimits) {}

  private counter(key: string): Counter {
    let counter = this.counters.get(key);
    if (!counter) {
      counter = { seconds: [], secondCounts: [], hours: [], hourCounts: [], lastSeen: 0, refusedAt: 0 };
      this.counters.set(key, counter);
    }
    return counter;
  }

  /** Sum of the buckets newer than `oldest`. */
  private static sumSince(buckets: number[], counts: number[], oldest: number): number {
    let total = 0;
    for (let i = buckets.length - 1; i >= 0 && buckets[i]! > oldest; i--) total += counts[i]!;
    return total;
  }

  /** Adds `count` to bucket `bucket` and drops the buckets at or before `oldest`. */
  private static addTo(buckets: number[], counts: number[], bucket: number, count: number, oldest: number): void {
    const last = buckets.length - 1;
    if (last >= 0 && buckets[last] === bucket) counts[last]! += count;
    else {
      buckets.push(bucket);
      counts.push(count);
    }
    let expired = 0;
    while (expired < buckets.length && buckets[expired]! <= oldest) expired++;
    if (expired > 0) {
      buckets.splice(0, expired);
      counts.splice(0, expired);
    }
  }

  private windowCount(counter: Counter | undefined, now: number): number {
    return counter ? Throttle.sumSince(counter.seconds, counter.secondCounts, Math.floor(now / 1000) - this.limits.windowSeconds) : 0;
  }

  private dailyCount(counter: Counter | undefined, now: number): number {
    return counter ? Throttle.sumSince(counter.hours, counter.hourCounts, Math.floor(now / HOUR_MS) - HOURS) : 0;
  }

  /** Counts per `d:`/`u:` key of one request's events. */
  private static tally(appId: number, events: Identified[]): Map<string, { kind: 'device' | 'user'; id: string; count: number; indexes: number[] }> {
    const tally = new Map<string, { kind: 'device' | 'user'; id: string; count: number; indexes: number[] }>();
    events.forEach((event, index) => {
      for (const [kind, id] of [
        ['device', event.device_id],
        ['user', event.user_id],
      ] as const) {
        if (!id) continue;
        const key = `${appId}\u0000${kind}\u0000${id}`;
        let entry = tally.get(key);
        if (!entry) tally.set(key, (entry = { kind, id, count: 0, indexes: [] }));
        entry.count++;
        entry.indexes.push(index);
      }
    });
    return tally;
  }

  /**
   * The verdict on a request if it would push a device or user over a limit (nothing is
   * recorded then); otherwise the request's events are counted and undefined returned.
   */
  admit(appId: number, events: Identified[], now: number): ThrottleVerdict | undefined {
    const tally = Throttle.tally(appId, events);
    const verdict: ThrottleVerdict = {
      throttled_devices: {},
      throttled_users: {},
      exceeded_daily_quota_devices: {},
      exceeded_daily_quota_users: {},
      throttled_events: [],
      silenced_devices: [],
      silenced_events: [],
    };
    const throttledIndexes = new Set<number>();
    const silencedIndexes = new Set<number>();
    const refused: string[] = [];
    for (const [key, entry] of tally) {
      const counter = this.counters.get(key);
      const inWindow = this.windowCount(counter, now) + entry.count;
      const inDay = this.dailyCount(counter, now) + entry.count;
      const rate = inWindow / this.limits.windowSeconds;
      let over = false;
      if (rate > this.limits.epsThreshold) {
        (entry.kind === 'device' ? verdict.throttled_devices : verdict.throttled_users)[entry.id] = Math.round(rate * 10) / 10;
        over = true;
      }
      if (inDay > this.limits.dailyLimit) {
        (entry.kind === 'device' ? verdict.exceeded_daily_quota_devices : verdict.exceeded_daily_quota_users)[entry.id] = inDay;
        over = true;
      }
      if (!over) continue;
      refused.push(key);
      const silenced = entry.kind === 'device' && counter !== undefined && counter.refusedAt > now - this.limits.silenceSeconds * 1000;
      if (silenced) verdict.silenced_devices.push(entry.id);
      for (const i of entry.indexes) (silenced ? silencedIndexes : throttledIndexes).add(i);
    }
    if (refused.length > 0) {
      for (const key of refused) Object.assign(this.counter(key), { refusedAt: now, lastSeen: now });
      const ascending = (indexes: Set<number>) => [...indexes].sort((a, b) => a - b);
      verdict.silenced_events = ascending(silencedIndexes);
      verdict.throttled_events = ascending(throttledIndexes).filter((i) => !silencedIndexes.has(i));
      return verdict;
    }
    const second = Math.floor(now / 1000);
    const hour = Math.floor(now / HOUR_MS);
    for (const [key, entry] of tally) {
      const counter = this.counter(key);
      Throttle.addTo(counter.seconds, counter.secondCounts, second, entry.count, second - this.limits.windowSeconds);
      Throttle.addTo(counter.hours, counter.hourCounts, hour, entry.count, hour - HOURS);
      counter.lastSeen = now;
    }
    return undefined;
  }

  /** Forgets devices and users not seen for a day. */
  prune(now: number): void {
    for (const [key, counter] of this.counters) if (counter.lastSeen < now - HOURS * HOUR_MS) this.counters.delete(key);
  }
}
