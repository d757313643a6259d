// The tables of the ClickHouse engine next to `events` (migration 2): identities, profiles,
// attribution holds and the record of loaded journal segments. ClickHouse 18.16 has no
// transactions and no in-place updates but mutations, so every table is append-only and a
// row carries the journal segment that wrote it: rows of a segment whose load was cut short
// (no row in `loaded_segments`) are deleted before it loads again. Rows written outside a
// segment (user mappings) carry an empty segment name. The latest row of a key is the one of
// the highest `version` (the ingestion order of the segment that wrote it).
import { INACTIVE_EVENT_TYPES } from '../../model/query.js';
import { literal } from './sql-text.js';

/**
 * The tables split across shards (shards.ts): on each shard its rows in `<name>_local`, read
 * whole through a Distributed table of the name. Statements that write them name them through
 * `TableNames`: as they are on one server, or each shard's own.
 */
export type ShardedTable = 'events' | 'user_days' | 'user_firsts' | 'user_summaries' | 'user_local_days';
export type TableNames = (table: ShardedTable) => string;
export const SAME_NAMES: TableNames = (table) => table;
export const LOCAL_NAMES: TableNames = (table) => `${table}_local`;

export const engineTables = (t: TableNames): readonly string[] => [
  `ALTER TABLE ${t('events')} ADD COLUMN segment String DEFAULT ''`,
  'CREATE TABLE IF NOT EXISTS loaded_segments (name String, last_ingest_seq Int64, loaded_at UInt64) ENGINE = MergeTree() ORDER BY name',
  'CREATE TABLE IF NOT EXISTS identity_users (app_id Int32, user_id String, svc_id Int64, segment String) ENGINE = MergeTree() ORDER BY (app_id, user_id)',
  'CREATE TABLE IF NOT EXISTS identity_devices (app_id Int32, device_id String, svc_id Int64, owner Nullable(String), version Int64, segment String) ENGINE = MergeTree() ORDER BY (app_id, device_id)',
  'CREATE TABLE IF NOT EXISTS svc_merges (from_svc Int64, to_svc Int64, segment String) ENGINE = MergeTree() ORDER BY from_svc',
  // A deleted profile (merged into its user's) is a row with `deleted = 1`.
  'CREATE TABLE IF NOT EXISTS profiles (app_id Int32, svc_id Int64, properties String, updated_at Int64, version Int64, deleted UInt8, segment String) ENGINE = MergeTree() ORDER BY (app_id, svc_id)',
  // Not sorted by svc_id: merges re-point it by mutation, and 18.16 cannot update key columns.
  'CREATE TABLE IF NOT EXISTS profile_versions (app_id Int32, svc_id Int64, ingest_seq Int64, properties String, segment String) ENGINE = MergeTree() ORDER BY (app_id, ingest_seq)',
  'CREATE TABLE IF NOT EXISTS group_profiles (app_id Int32, group_type String, group_value String, properties String, updated_at Int64, version Int64, segment String) ENGINE = MergeTree() ORDER BY (app_id, group_type, group_value)',
  // A hold is a row with `released = 0`; its release (attached to an event) a row with the same id and `released = 1`.
  'CREATE TABLE IF NOT EXISTS held_attributions (id String, app_id Int32, received_at Int64, event String, released UInt8, segment String) ENGINE = MergeTree() ORDER BY id',
];

/** The tables a segment's load writes to, `loaded_segments` last (it records the load as done). */
export const SEGMENT_TABLES = ['events', 'identity_users', 'identity_devices', 'svc_merges', 'profiles', 'profile_versions', 'group_profiles', 'held_attributions'] as const;

/**
 * What reporting reads next to the events (migration 3): cohort memberships and user mappings,
 * append-only as the tables above. The current state of a key is its row of the highest
 * `version` (the engine's clock, see reporting-rows.ts); a left cohort member is a row with
 * `member = 0`, an unmapped user a row with `to_svc` NULL. The entity store (SqlSession)
 * keeps the mappings' user ids; this mirror holds what the reporting SQL joins.
 */
export const reportingTables = (t: TableNames): readonly string[] => [
  'CREATE TABLE IF NOT EXISTS cohort_members (app_id Int32, cohort_id String, svc_id Int64, member UInt8, version Int64) ENGINE = MergeTree() ORDER BY (app_id, cohort_id, svc_id)',
  'CREATE TABLE IF NOT EXISTS user_mappings (app_id Int32, from_svc Int64, to_svc Nullable(Int64), version Int64) ENGINE = MergeTree() ORDER BY (app_id, from_svc)',
  // Property objects split into their top-level keys and values' JSON texts (user-at-event.ts, splitProperties):
  // 18.16 reads JSON only by visitParam, which finds a key at any depth. Rows written before
  // this step have empty arrays (no ClickHouse database held events before it).
  `ALTER TABLE ${t('events')} ADD COLUMN property_keys Array(String) DEFAULT []`,
  `ALTER TABLE ${t('events')} ADD COLUMN property_values Array(String) DEFAULT []`,
  `ALTER TABLE ${t('events')} ADD COLUMN user_property_keys Array(String) DEFAULT []`,
  `ALTER TABLE ${t('events')} ADD COLUMN user_property_values Array(String) DEFAULT []`,
  "ALTER TABLE profile_versions ADD COLUMN property_keys Array(String) DEFAULT []",
  "ALTER TABLE profile_versions ADD COLUMN property_values Array(String) DEFAULT []",
];

/**
 * Loads per project (migration 4): a project's load of a segment, and a project's share of a
 * user mapping or scrub, record their project; 0 is of no one project (whole segments, and
 * loads made before loads were per project, which every project's readers take into account).
 */
export const LOAD_OWNERSHIP_TABLES: readonly string[] = ['ALTER TABLE loaded_segments ADD COLUMN app_id Int32 DEFAULT 0'];

const ACTIVITY_HOUR_MS = 3_600_000;
const ACTIVITY_DAY_MS = 86_400_000;
/** The UTC day of an epoch-ms `time` column, rounded down (times before 1970 too). */
const UTC_DAY = `toInt32(if(time < 0, intDiv(time + 1, ${ACTIVITY_DAY_MS}) - 1, intDiv(time, ${ACTIVITY_DAY_MS})))`;
/**
 * An event's places in `user_days`: a row's mask holds the hours of its UTC day and of the next
 * (48 bits), so that every local day (offsets within a day of UTC) lies whole in the row of the
 * UTC day it starts in. `(…) AS alias` inside the expression: 18.16's views take no subquery.
 */
const PLACES = `arrayJoin([tuple(${UTC_DAY} AS utc_day, bitShiftLeft(toUInt64(1), toUInt8(intDiv(time - utc_day * ${ACTIVITY_DAY_MS}, ${ACTIVITY_HOUR_MS}))) AS hour_bit), tuple(utc_day - 1, bitShiftLeft(hour_bit, 24))])`;
/** Whether an event is active (INACTIVE_EVENT_TYPES), in SQL. */
export const ACTIVE_EVENT_SQL = `event_type NOT IN (${INACTIVE_EVENT_TYPES.map(literal).join(', ')})`;

/**
 * What the views insert for a block of events (and a rebuild for some projects' events).
 * `ifNull(svc_id, 0) AS svc_id` filtered on `!= 0`: 18.16 resolves the alias before the column
 * in WHERE, and svc_ids start at 1, so events of no user are left out either way.
 */
export const userDaysOf = (t: TableNames, where = '') =>
  `SELECT app_id, toInt32(tupleElement(${PLACES} AS place, 1)) AS day, ifNull(svc_id, 0) AS svc_id,
     groupBitOrState(if(${ACTIVE_EVENT_SQL}, tupleElement(place, 2), toUInt64(0))) AS active_hours, groupBitOrState(tupleElement(place, 2)) AS all_hours
   FROM ${t('events')} WHERE svc_id != 0${where} GROUP BY app_id, day, svc_id`;
export const userFirstsOf = (t: TableNames, where = '') =>
  `SELECT app_id, ifNull(svc_id, 0) AS svc_id, minState(time) AS first_time FROM ${t('events')} WHERE svc_id != 0${where} GROUP BY app_id, svc_id`;

/** Migration 5 (user-activity.ts): the tables, their views, and the events stored before them. */
export const userActivityTables = (t: TableNames): readonly string[] => [
  `CREATE TABLE IF NOT EXISTS ${t('user_days')} (app_id Int32, day Int32, svc_id Int64, active_hours AggregateFunction(groupBitOr, UInt64), all_hours AggregateFunction(groupBitOr, UInt64)) ENGINE = AggregatingMergeTree() ORDER BY (app_id, day, svc_id)`,
  `CREATE TABLE IF NOT EXISTS ${t('user_firsts')} (app_id Int32, svc_id Int64, first_time AggregateFunction(min, Int64)) ENGINE = AggregatingMergeTree() ORDER BY (app_id, svc_id)`,
  `CREATE MATERIALIZED VIEW IF NOT EXISTS user_days_feed TO ${t('user_days')} AS ${userDaysOf(t)}`,
  `CREATE MATERIALIZED VIEW IF NOT EXISTS user_firsts_feed TO ${t('user_firsts')} AS ${userFirstsOf(t)}`,
  `INSERT INTO ${t('user_days')} ${userDaysOf(t)}`,
  `INSERT INTO ${t('user_firsts')} ${userFirstsOf(t)}`,
];

/** ingest_seq of no event: `first_paid` of users who never paid, `start_seq` of users without a version. */
export const NEVER_PAID = 'toInt64(9223372036854775807)';

/**
 * What the views insert for a block of events into `user_summaries`: per user the first event
 * with an app_version (`start_seq`, its version) and the first with a revenue. No Nullable
 * arguments: a state of them would drop the Nullable and answer '' for none.
 */
export const userSummariesOf = (t: TableNames, where = '') =>
  `SELECT app_id, ifNull(svc_id, 0) AS svc_id, minState(if(app_version IS NULL, ${NEVER_PAID}, ingest_seq)) AS start_seq,
     argMinState(ifNull(app_version, ''), if(app_version IS NULL, ${NEVER_PAID}, ingest_seq)) AS start_version, minState(if(revenue IS NOT NULL, ingest_seq, ${NEVER_PAID})) AS first_paid
   FROM ${t('events')} WHERE svc_id != 0${where} GROUP BY app_id, svc_id`;

/**
 * Migration 6 (user-activity.ts): what the user's built-in `start_version` and `paying` need of
 * its whole history, kept as segments load, and the events stored before it.
 */
export const userSummaryTables = (t: TableNames): readonly string[] => [
  `CREATE TABLE IF NOT EXISTS ${t('user_summaries')} (app_id Int32, svc_id Int64, start_seq AggregateFunction(min, Int64), start_version AggregateFunction(argMin, String, Int64), first_paid AggregateFunction(min, Int64)) ENGINE = AggregatingMergeTree() ORDER BY (app_id, svc_id)`,
  `CREATE MATERIALIZED VIEW IF NOT EXISTS user_summaries_feed TO ${t('user_summaries')} AS ${userSummariesOf(t)}`,
  `INSERT INTO ${t('user_summaries')} ${userSummariesOf(t)}`,
];

/**
 * Migration 7 (local-days.ts): a row per project, time zone, kind (any event, an active event),
 * local day and user, each written once, and the zones whose rows are built.
 */
export const localDayTables = (t: TableNames): readonly string[] => [
  `CREATE TABLE IF NOT EXISTS ${t('user_local_days')} (app_id Int32, zone String, kind UInt8, day Int32, svc_id Int64) ENGINE = MergeTree() ORDER BY (app_id, zone, kind, day, svc_id)`,
  'CREATE TABLE IF NOT EXISTS local_day_zones (app_id Int32, zone String) ENGINE = MergeTree() ORDER BY (app_id, zone)',
];


/** A SELECT of `svc_id` of the cohort's current members. */
export function currentCohortMembers(appId: number, cohortId: string, literal: (value: string) => string): string {
  return `SELECT svc_id FROM (SELECT svc_id, argMax(member, version) AS member FROM cohort_members WHERE app_id = ${Math.trunc(appId)} AND cohort_id = ${literal(cohortId)} GROUP BY svc_id) WHERE member = 1`;
}

/**
 * A SELECT of the project's users (`uid`, or those `ofUsers` holds: a condition on `svc_id`) as
 * `user_summaries` keeps them: `first_version`, and `first_paid` (NEVER_PAID for none). Aliases
 * other than the columns: 18.16 resolves an alias inside its own expression.
 */
export const currentUserSummaries = (appId: number, ofUsers = 'svc_id != 0') =>
  `SELECT svc_id AS uid, if(minMerge(start_seq) = ${NEVER_PAID}, NULL, argMinMerge(start_version)) AS first_version, minMerge(first_paid) AS first_paid_seq
   FROM user_summaries WHERE app_id = ${Math.trunc(appId)} AND ${ofUsers} GROUP BY uid`;

/**
 * A SELECT of `from_svc, to_svc` of the project's current user mappings (`to_svc` in a tuple:
 * argMax skips NULLs). `mapped_to`: an alias `to_svc` would hide the column in WHERE.
 */
export function currentUserMappings(appId: number): string {
  return `SELECT from_svc, assumeNotNull(mapped_to) AS to_svc FROM (SELECT from_svc, tupleElement(argMax(tuple(to_svc), version), 1) AS mapped_to FROM user_mappings WHERE app_id = ${Math.trunc(appId)} GROUP BY from_svc) WHERE mapped_to IS NOT NULL`;
}
