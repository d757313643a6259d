// Users per local day on ClickHouse counted, not hashed (migration 7): `user_local_days` holds a
// row per project, time zone, kind (any event, an active event), local day and user, each
// written once, so that a day's users are the `count()` of its rows; over a longer bucket or the
// whole range they are counted distinct. `user_days` (user-activity.ts) keeps masks per UTC day
// instead, whose rows a merge of parts has to combine: counting them distinct per day cost
// three times as much (docs/performance.md, "Active and new users on ClickHouse").
//
// Zones are the projects' settings, which the engine does not see: a zone's rows are built from
// the project's events the first time a question is asked in it (that question is answered
// from `user_days` meanwhile), under the project's load lock, and `local_day_zones` lists the
// zones built. Every load after (under the same lock) writes, for each zone built, the rows of
// its events' user-days that are not there yet. Merges, deletions and a torn load's removal
// keep the rows as they keep `user_days` (user-activity.ts).
import type { TimelineCounts, TimelineCountsQuery } from '../timelines/counts.js';
import { matchesEventType } from '../../model/query.js';
import { bucketAt, bucketPieces, dayNumberOf, dayStartMs, offsetsBetween } from '../../model/time.js';
import { localWallMs } from '../dialect.js';
import type { ClickHouseEvents } from './events.js';
import { integers, literal } from './sql-text.js';
import { insertRows, mutate } from './statements.js';
import { ACTIVE_EVENT_SQL } from './tables.js';

const DAY = 86_400_000;
/** `kind` of a row: the user had an event that day, or an active event. */
const ANY_KIND = 0;
const ACTIVE_KIND = 1;
/** Rows of a Distributed table written to their shards before the INSERT returns (on one server a no-op). */
const TO_SHARDS_NOW = { insert_distributed_sync: 1 } as const;

/** A day and a kind as one number (a Map key), and back. */
const dayAndKind = (day: number, kind: number) => day * 2 + kind;
const dayOfKey = (key: number) => Math.floor(key / 2);
const kindOfKey = (key: number) => key - dayOfKey(key) * 2;

/** Runs `work` under the project's load lock, after the loads of this process before it. */
export type UnderProjectLock = (appId: number, work: () => Promise<void>) => Promise<void>;

/** The events a load inserts, as the local days need them: user, time, and whether active. */
export class LoadedActivity {
  readonly svcIds: Float64Array;
  readonly times: Float64Array;
  readonly active: Uint8Array;
  count = 0;

  constructor(events: number) {
    [this.svcIds, this.times, this.active] = [new Float64Array(events), new Float64Array(events), new Uint8Array(events)];
  }

  add(svcId: number | null, time: number, eventType: string): void {
    if (svcId === null) return;
    this.svcIds[this.count] = svcId;
    this.times[this.count] = time;
    this.active[this.count++] = matchesEventType('_active', eventType) ? 1 : 0;
  }
}

/**
 * The local day of an instant in the zone: its wall time's day, with the offsets `localWallMs`
 * writes into the SQL (offsetsBetween), found per UTC day and kept.
 */
function localDayOf(timeZone: string): (time: number) => number {
  const offsetsOfDay = new Map<number, { fromMs: number; offsetMs: number }[]>();
  return (time) => {
    const utcDay = Math.floor(time / DAY);
    let offsets = offsetsOfDay.get(utcDay);
    if (!offsets) offsetsOfDay.set(utcDay, (offsets = offsetsBetween(timeZone, utcDay * DAY, (utcDay + 1) * DAY)));
    let offset = offsets[0]!.offsetMs;
    for (const change of offsets) if (change.fromMs <= time) offset = change.offsetMs;
    return Math.floor((time + offset) / DAY);
  };
}

/** The range's local days, each with its bucket; undefined unless the range is whole local days. */
function daysOf(query: TimelineCountsQuery): { first: number; last: number; buckets: number[] } | undefined {
  const { range, timeZone, interval } = query;
  const [first, last] = [dayNumberOf(range.start), dayNumberOf(range.end)];
  if (range.startMs !== dayStartMs(timeZone, first) || range.endMs !== dayStartMs(timeZone, last + 1)) return undefined;
  const pieces = bucketPieces(timeZone, range, interval);
  const buckets: number[] = [];
  for (let day = first; day <= last; day++) buckets.push(bucketAt(pieces, dayStartMs(timeZone, day)));
  return { first, last, buckets };
}

export class LocalDays {
  /** Projects' zones known built (`app_id` and zone in one key). */
  private readonly built = new Set<string>();
  /** Builds under way, by the same keys. */
  private readonly building = new Map<string, Promise<void>>();

  constructor(
    private readonly store: ClickHouseEvents,
    private readonly underProjectLock: UnderProjectLock,
    private readonly mutationTimeLimitMs: number,
    private readonly log: (message: string) => void,
  ) {}

  /** The zones built for the project (read under its lock by a load: another process may have built one). */
  async zones(appId: number): Promise<string[]> {
    const rows = await this.store.query(`SELECT DISTINCT zone FROM local_day_zones WHERE app_id = ${Math.trunc(appId)}`);
    return rows.map((row) => String(row.zone));
  }

  /** Under the project's lock: the rows of the loaded events' user-days that the zones lack. */
  async record(appId: number, zones: readonly string[], loaded: LoadedActivity): Promise<void> {
    for (const zone of zones) {
      const dayOf = localDayOf(zone);
      // Per day and kind, the users with an event then.
      const users = new Map<number, Set<number>>();
      for (let i = 0; i < loaded.count; i++) {
        const day = dayOf(loaded.times[i]!);
        // Every event counts for ANY_KIND, an active one for ACTIVE_KIND too.
        for (let kind = ANY_KIND; kind <= (loaded.active[i] === 1 ? ACTIVE_KIND : ANY_KIND); kind++) {
          const key = dayAndKind(day, kind);
          let ofDay = users.get(key);
          if (!ofDay) users.set(key, (ofDay = new Set()));
          ofDay.add(loaded.svcIds[i]!);
        }
      }
      if (users.size === 0) continue;
      const days = [...new Set([...users.keys()].map(dayOfKey))];
      const svcIds = [...new Set(loaded.svcIds.subarray(0, loaded.count))];
      const present = await this.store.query(
        `SELECT kind, day, svc_id FROM user_local_days WHERE app_id = ${Math.trunc(appId)} AND zone = ${literal(zone)}
         AND day IN (${integers(days)}) AND svc_id IN (SELECT arrayJoin(CAST([${integers(svcIds)}] AS Array(Int64))))`,
      );
      for (const row of present) users.get(dayAndKind(Number(row.day), Number(row.kind)))?.delete(Number(row.svc_id));
      const rows = [...users].flatMap(([key, ofDay]) => [...ofDay].map((svcId) => ({ app_id: appId, zone, kind: kindOfKey(key), day: dayOfKey(key), svc_id: svcId })));
      if (rows.length === 0) continue;
      await insertRows(this.store, 'user_local_days', rows, TO_SHARDS_NOW);
      // A question right after the load may read the other shards' replicas.
      await this.store.fetchOtherReplicas();
    }
  }

  /**
   * Users per bucket and over the range of a question in a zone built; undefined otherwise (a
   * zone not built yet starts being built), and for questions these rows do not answer.
   */
  async counts(query: TimelineCountsQuery): Promise<TimelineCounts | undefined> {
    const kind = query.eventType === '_active' ? ACTIVE_KIND : query.eventType === '_all' ? ANY_KIND : undefined;
    if (query.measure !== 'uniques' || query.firstEventsOnly || kind === undefined) return undefined;
    const days = daysOf(query);
    if (!days || !(await this.isBuilt(query.appId, query.timeZone))) return undefined;
    const { first, last, buckets } = days;
    const where = `app_id = ${Math.trunc(query.appId)} AND zone = ${literal(query.timeZone)} AND kind = ${kind} AND day >= ${first} AND day <= ${last}`;
    // A day's rows are its users, one each: counted, not hashed.
    const perBucket =
      query.interval === 'day'
        ? `SELECT toInt32(day - ${first}) AS bucket, count() AS users FROM user_local_days WHERE ${where} GROUP BY day`
        : `SELECT transform(day, [${integers(buckets.map((_, i) => first + i))}], [${integers(buckets)}], -1) AS bucket, uniqExact(svc_id) AS users FROM user_local_days WHERE ${where} GROUP BY bucket`;
    const rows = await this.store.query(`${perBucket} UNION ALL SELECT toInt32(-2) AS bucket, uniqExact(svc_id) AS users FROM user_local_days WHERE ${where}`);
    const answer: TimelineCounts = { perBucket: new Array<number>(Math.max(-1, ...buckets) + 1).fill(0), whole: 0 };
    for (const row of rows) {
      const bucket = Number(row.bucket);
      if (bucket === -2) answer.whole = Number(row.users);
      else if (bucket >= 0) answer.perBucket[bucket] = Number(row.users);
    }
    return answer;
  }

  /**
   * Merged users' days become their targets' where the targets lack them (as the events'
   * `svc_id` is re-pointed); the merged users' rows are removed with the other tables'.
   */
  async repoint(from: readonly number[], to: readonly number[]): Promise<void> {
    const fromList = integers(from);
    const moved = `transform(svc_id, [${fromList}], [${integers(to)}], svc_id)`;
    await this.store.command(
      `INSERT INTO user_local_days SELECT DISTINCT app_id, zone, kind, day, ${moved} AS moved FROM user_local_days
        WHERE svc_id IN (${fromList}) AND (app_id, zone, kind, day, moved) NOT IN (SELECT app_id, zone, kind, day, svc_id FROM user_local_days WHERE svc_id IN (${integers(to)}))`,
      TO_SHARDS_NOW,
    );
  }

  /** The projects' rows again from their events in each zone built, after all of them were removed (a torn load). */
  async refill(appIds: readonly number[]): Promise<void> {
    for (const appId of appIds) for (const zone of await this.zones(appId)) await this.fill(appId, zone);
  }

  /** Waits for the builds under way. */
  async builds(): Promise<void> {
    await Promise.all(this.building.values());
  }

  private async isBuilt(appId: number, zone: string): Promise<boolean> {
    const key = `${Math.trunc(appId)} ${zone}`;
    if (this.built.has(key)) return true;
    if ((await this.zones(appId)).includes(zone)) {
      this.built.add(key);
      return true;
    }
    if (!this.building.has(key)) {
      const build = this.underProjectLock(appId, () => this.build(appId, zone))
        .catch((error: unknown) => this.log(`The local days of project ${appId} in ${zone} were not built (asked again, they will be): ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => this.building.delete(key));
      this.building.set(key, build);
    }
    return false;
  }

  /** Under the project's lock: the zone's rows from the project's events, then the zone recorded as built. */
  private async build(appId: number, zone: string): Promise<void> {
    if ((await this.zones(appId)).includes(zone)) return;
    // A build cut short left rows without its zone recorded.
    const ofZone = `app_id = ${Math.trunc(appId)} AND zone = ${literal(zone)}`;
    const [left] = await this.store.query(`SELECT count() AS n FROM user_local_days WHERE ${ofZone}`);
    if (Number(left?.n ?? 0) > 0) await mutate(this.store, 'user_local_days', `DELETE WHERE ${ofZone}`, this.mutationTimeLimitMs);
    await this.fill(appId, zone);
    await insertRows(this.store, 'local_day_zones', [{ app_id: appId, zone }]);
  }

  /** The zone's rows of the project's events, from the events (none there yet). */
  private async fill(appId: number, zone: string): Promise<void> {
    const project = `app_id = ${Math.trunc(appId)}`;
    const [span] = await this.store.query(`SELECT count() AS n, min(time) AS first, max(time) AS last FROM events WHERE ${project} AND isNotNull(svc_id)`);
    if (Number(span?.n ?? 0) === 0) return;
    const wall = localWallMs(zone, 'time', Number(span!.first), Number(span!.last) + 1);
    // `ifNull(svc_id, 0) AS svc_id` filtered on `!= 0`: 18.16 resolves the alias before the column in WHERE.
    const rows = `SELECT DISTINCT app_id, ${literal(zone)} AS zone, kind, toInt32(floor(${wall} / ${DAY})) AS day, ifNull(svc_id, 0) AS svc_id
      FROM events ARRAY JOIN if(${ACTIVE_EVENT_SQL}, [toUInt8(${ANY_KIND}), toUInt8(${ACTIVE_KIND})], [toUInt8(${ANY_KIND})]) AS kind
      WHERE ${project} AND svc_id != 0`;
    await this.store.command(`INSERT INTO user_local_days ${rows}`, TO_SHARDS_NOW);
  }
}
