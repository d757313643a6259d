// Active and new users on ClickHouse without scanning the events (migration 5, tables.ts): what
// those questions need is kept as segments load, in two AggregatingMergeTree tables that
// materialized views feed from every insert into `events`:
// - `user_days`: per project, user and UTC day, the hours of that day and the next with an
//   event and with an active event, as 48-bit masks (groupBitOr), so that each local day lies
//   whole in one row: the row of the UTC day it starts in;
// - `user_firsts`: per project and user, the time of the first event (min);
// - `user_summaries` (migration 6): per project and user, the first app_version and the first
//   revenue event's ingest_seq, for the built-in `start_version` and `paying` (dialect.ts).
// The aggregates are idempotent (a row fed twice changes nothing), so a backfill racing the
// views is harmless. What the views do not see is rows changing: the engine mirrors merges
// (`repoint`), deletions (`remove`) and a torn load's removal (`rebuild`) here.
//
// Active users (and users with any event) of a zone whose local days are built are counted
// from `user_local_days` (local-days.ts); until then, and for new users, from these tables.
// Any bucketing by local days whose boundaries fall on whole UTC hours (every zone with
// whole-hour offsets, daylight saving included) is answered; other zones, other measures and
// filtered questions are answered by scanning the events (counts.ts's SQL).
import type { TimelineCounts, TimelineCountsQuery } from '../timelines/counts.js';
import { bucketPieces, pieceAt } from '../../model/time.js';
import type { ClickHouseEvents } from './events.js';
import { mutate } from './statements.js';
import { integers } from './sql-text.js';
import { userDaysOf, userFirstsOf, userSummariesOf } from './tables.js';
import type { LocalDays } from './local-days.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Longer ranges (in hours) are scanned: each day of the range is written into the query. */
const MAX_RANGE_HOURS = 24 * 370;
/** The ids of users counted as 32-bit integers below this (exact, and twice as fast to count distinct). */
const UINT32_IDS = 2 ** 32;

const TABLES = ['user_days', 'user_firsts', 'user_summaries', 'user_local_days'] as const;

/** A local day of the range: the hours it spans in the 48-hour window of the `user_days` row of its first hour's UTC day. */
interface DayInRow {
  row: number;
  /** Its first hour, in hours since 1970. */
  startHour: number;
  bucket: number;
  mask: number;
}

/**
 * The range's local days in `user_days` rows, with the bucket of each (-1: in the range, in no
 * bucket); undefined when a day starts within an hour, or the range is too long.
 */
function daysInRows(query: TimelineCountsQuery): DayInRow[] | undefined {
  const { range, timeZone, interval } = query;
  if ((range.endMs - range.startMs) / HOUR > MAX_RANGE_HOURS) return undefined;
  const days = bucketPieces(timeZone, range, 'day');
  const buckets = bucketPieces(timeZone, range, interval);
  const found: DayInRow[] = [];
  for (let i = 0; i < days.buckets.length; i++) {
    const [start, end] = [days.starts[i]!, days.starts[i + 1]!];
    if (start % HOUR !== 0 || end % HOUR !== 0) return undefined;
    const row = Math.floor(start / DAY);
    const [first, hours] = [(start - row * DAY) / HOUR, (end - start) / HOUR];
    if (first + hours > 48) return undefined;
    found.push({ row, startHour: start / HOUR, bucket: buckets.buckets[pieceAt(buckets, start)]!, mask: (2 ** hours - 1) * 2 ** first });
  }
  return found;
}

const int32s = (values: readonly number[]) => `[${values.map((v) => `toInt32(${v})`).join(',')}]`;
const uint64s = (values: readonly number[]) => `[${values.map((v) => `toUInt64(${v})`).join(',')}]`;

export class UserActivity {
  constructor(
    private readonly store: ClickHouseEvents,
    private readonly mutationTimeLimitMs: number,
    private readonly localDays: LocalDays,
  ) {}

  /**
   * Users per bucket and over the range from the kept activity: active users (`_active`), users
   * with any event (`_all`) and new users; undefined for what it does not keep.
   */
  async counts(query: TimelineCountsQuery): Promise<TimelineCounts | undefined> {
    const eventType = query.firstEventsOnly ? '_all' : query.eventType;
    if (query.measure !== 'uniques' || (eventType !== '_active' && eventType !== '_all')) return undefined;
    const counted = await this.localDays.counts(query);
    if (counted) return counted;
    const days = daysInRows(query);
    if (!days) return undefined;
    const appId = Math.trunc(query.appId);
    const [ids] = await this.store.query(`SELECT max(svc_id) AS last FROM user_firsts WHERE app_id = ${appId}`);
    const user = Number(ids?.last ?? 0) < UINT32_IDS ? 'toUInt32(svc_id)' : 'svc_id';
    const sql = query.firstEventsOnly ? this.newUsers(query, days, user) : this.activeUsers(appId, days, eventType === '_active' ? 'active_hours' : 'all_hours', user);
    const { data, totals } = await this.store.read(async (client) => (await client.query({ query: sql, format: 'JSON' })).json<{ bucket: number; users: number | string }>());
    const answer: TimelineCounts = { perBucket: new Array<number>(Math.max(-1, ...days.map((d) => d.bucket)) + 1).fill(0), whole: Number(totals?.users ?? 0) };
    for (const row of data) if (row.bucket >= 0) answer.perBucket[row.bucket] = Number(row.users);
    return answer;
  }

  /**
   * Each user-day row counts in the bucket of the local day that starts in its UTC day, when
   * the row has hours of that day (its 48-hour window holds the whole local day); where clocks
   * change, a UTC day may hold the starts of two local days, and its rows count in both. Rows of
   * a user-day not merged yet each count; the distinct count counts the user once.
   */
  private activeUsers(appId: number, days: DayInRow[], hoursColumn: string, user: string): string {
    const rows = [...new Set(days.map((d) => d.row))];
    const [first, second] = [new Map<number, DayInRow>(), new Map<number, DayInRow>()];
    for (const day of days) (first.has(day.row) ? second : first).set(day.row, day);
    const candidate = (ofRow: Map<number, DayInRow>) => {
      const keys = [...ofRow.keys()];
      const mask = `transform(day, ${int32s(keys)}, ${uint64s(keys.map((row) => ofRow.get(row)!.mask))}, toUInt64(0))`;
      return `if(bitAnd(finalizeAggregation(${hoursColumn}), ${mask}) != 0, transform(day, ${int32s(keys)}, ${int32s(keys.map((row) => ofRow.get(row)!.bucket))}, toInt32(-3)), toInt32(-3))`;
    };
    const bucket = second.size === 0 ? candidate(first) : `arrayJoin([${candidate(first)}, ${candidate(second)}])`;
    return `SELECT ${bucket} AS bucket, uniqExact(${user}) AS users FROM user_days
      WHERE app_id = ${appId} AND day >= ${Math.min(...rows)} AND day <= ${Math.max(...rows)} AND bucket != -3 GROUP BY bucket WITH TOTALS`;
  }

  /** Each user's first event, in the bucket of its local day. */
  private newUsers(query: TimelineCountsQuery, days: DayInRow[], user: string): string {
    const { startMs, endMs } = query.range;
    // The local days' first hours, counted from the range's: a day is the last whose first hour is not after the event's.
    const starts = days.map((day) => day.startHour - startMs / HOUR);
    return `SELECT transform(toInt32(arrayCount(h -> h <= intDiv(first - ${Math.trunc(startMs)}, ${HOUR}), ${int32s(starts)})), ${int32s(days.map((_, i) => i + 1))}, ${int32s(days.map((d) => d.bucket))}, toInt32(-1)) AS bucket, uniqExact(${user}) AS users
      FROM (SELECT svc_id, minMerge(first_time) AS first FROM user_firsts WHERE app_id = ${Math.trunc(query.appId)} GROUP BY svc_id)
      WHERE first >= ${Math.trunc(startMs)} AND first < ${Math.trunc(endMs)} GROUP BY bucket WITH TOTALS`;
  }

  /** Merged users' rows become their targets' (copied, then removed): as the events' `svc_id` is re-pointed. */
  async repoint(from: readonly number[], to: readonly number[]): Promise<void> {
    const [fromList, toList] = [integers(from), integers(to)];
    // No alias: WHERE would read it instead of the column.
    const moved = `transform(svc_id, [${fromList}], [${toList}], svc_id)`;
    // On each shard, where the merged users' rows are (shards.ts).
    await this.store.onEveryShard((t) => `INSERT INTO ${t('user_days')} SELECT app_id, day, ${moved}, active_hours, all_hours FROM ${t('user_days')} WHERE svc_id IN (${fromList})`);
    await this.store.onEveryShard((t) => `INSERT INTO ${t('user_firsts')} SELECT app_id, ${moved}, first_time FROM ${t('user_firsts')} WHERE svc_id IN (${fromList})`);
    await this.store.onEveryShard((t) => `INSERT INTO ${t('user_summaries')} SELECT app_id, ${moved}, start_seq, start_version, first_paid FROM ${t('user_summaries')} WHERE svc_id IN (${fromList})`);
    await this.localDays.repoint(from, to);
    for (const table of TABLES) await mutate(this.store, table, `DELETE WHERE svc_id IN (${fromList})`, this.mutationTimeLimitMs);
  }

  /** Deleted users' rows go. */
  async remove(appId: number, svcIds: readonly number[]): Promise<void> {
    for (const table of TABLES) await mutate(this.store, table, `DELETE WHERE app_id = ${Math.trunc(appId)} AND svc_id IN (${integers(svcIds)})`, this.mutationTimeLimitMs);
  }

  /** The projects' rows again from their events: after rows of events were removed (a torn load). */
  async rebuild(appIds: readonly number[]): Promise<void> {
    if (appIds.length === 0) return;
    const projects = `app_id IN (${integers(appIds)})`;
    for (const table of TABLES) await mutate(this.store, table, `DELETE WHERE ${projects}`, this.mutationTimeLimitMs);
    await this.store.onEveryShard((t) => `INSERT INTO ${t('user_days')} ${userDaysOf(t, ` AND ${projects}`)}`);
    await this.store.onEveryShard((t) => `INSERT INTO ${t('user_firsts')} ${userFirstsOf(t, ` AND ${projects}`)}`);
    await this.store.onEveryShard((t) => `INSERT INTO ${t('user_summaries')} ${userSummariesOf(t, ` AND ${projects}`)}`);
    await this.localDays.refill(appIds);
  }
}
