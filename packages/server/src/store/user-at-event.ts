// The user's state at an exported event, as reporting reads it (reporting/SEMANTICS.md,
// "Properties at event time"): the user properties in force, `paying` and `start_version`.
// DuckDB computes them in its export SQL (duckdb/export-lines.ts); the ClickHouse engine's export
// (clickhouse/exported-users.ts) and the user activity page (reporting/runners/user-state.ts)
// here, from the rows and the users' histories (`userHistories`). All follow
// one rule, so that their lines are the same bytes:
// - a `$identify` event: the profile version at it (after its own operations), `{}` without one;
// - another event: the profile version at it, with the event's own user properties over it: the
//   profile's keys in its order (a key the event also has takes the event's value), then the
//   event's other keys in its order. Without a profile or without own keys, the other side's
//   text as stored.
// `paying` and `start_version` set in the profile (the Identify API's fields) win over those
// derived from the user's events.

import type { Dialect } from './dialect.js';

/** An object's top-level keys and the JSON texts of their values (the split columns of ClickHouse). */
export interface SplitObject {
  keys: readonly string[];
  values: readonly string[];
}

/** A user's profile after one `$identify` (ingest_seq of that event). */
export interface ProfileVersion extends SplitObject {
  seq: number;
  text: string;
}

/** What the export reads of a user besides the event. */
export interface UserHistory {
  /** Profile versions by ingest_seq: the last before the range and those in it. */
  versions: ProfileVersion[];
  /** The app_version of the user's first event that has one. */
  startVersion: string | null;
  /** ingest_seq of the user's first event with a revenue, null when none. */
  firstPaidSeq: number | null;
}

/** The columns each engine adds to the exported rows (store/export-lines.ts writes them). */
export const AT_EVENT = {
  userProperties: 'user_properties_at_event',
  paying: 'paying_at_event',
  startVersion: 'start_version_at_event',
} as const;

const EMPTY = '{}';

/** The version in force at `seq`: the last at or before it. */
export function versionAt(versions: readonly ProfileVersion[], seq: number): ProfileVersion | undefined {
  let [low, high] = [0, versions.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (versions[middle]!.seq <= seq) low = middle + 1;
    else high = middle;
  }
  return versions[low - 1];
}

/** The profile's entries with the event's over them (the rule above), as JSON text. */
export function mergedText(profile: SplitObject, own: SplitObject): string {
  const values = new Map<string, string>();
  for (let i = 0; i < profile.keys.length; i++) values.set(profile.keys[i]!, profile.values[i]!);
  for (let i = 0; i < own.keys.length; i++) values.set(own.keys[i]!, own.values[i]!);
  let text = '';
  for (const [key, value] of values) text += `${text === '' ? '' : ','}${JSON.stringify(key)}:${value}`;
  return `{${text}}`;
}

/** The event's own user properties: their stored JSON text (null when none) and split. */
export interface OwnUserProperties extends SplitObject {
  text: string | null;
}

/** An object's top-level keys, and each value's JSON text, for the split columns (empty for null). */
export function splitProperties(properties: Record<string, unknown> | null): [string[], string[]] {
  if (properties === null) return [[], []];
  const keys = Object.keys(properties);
  return [keys, keys.map((key) => JSON.stringify(properties[key]) ?? 'null')];
}

/** A JSON object's text split as ClickHouse stores it (keys in the text's order: texts are JSON.stringify's). */
export function splitText(text: string | null): SplitObject {
  const [keys, values] = splitProperties(text === null ? null : (JSON.parse(text) as Record<string, unknown>));
  return { keys, values };
}

/** The user properties in force at an event of this type, with this profile version, as JSON text. */
function userPropertiesAt(eventType: string, profile: ProfileVersion | undefined, own: OwnUserProperties): string {
  if (eventType === '$identify') return profile?.text ?? EMPTY;
  if (!profile || profile.keys.length === 0) return own.text ?? EMPTY;
  if (own.keys.length === 0) return profile.text;
  return mergedText(profile, own);
}

/** A profile property's text as reporting reads it (DuckDB's json_extract_string): strings as they are, null as missing, other JSON as its text. */
function profileText(profile: ProfileVersion | undefined, key: string): string | null {
  const at = profile ? profile.keys.indexOf(key) : -1;
  if (at < 0) return null;
  const value = JSON.parse(profile!.values[at]!) as unknown;
  return value === null ? null : typeof value === 'string' ? value : profile!.values[at]!;
}

type Row = Record<string, unknown>;

/**
 * The row of an event (`svc_id`, `ingest_seq`, `event_type`) with the user's state at it in the
 * columns of AT_EVENT: `paying` and `start_version` set in the profile (the Identify API's
 * fields) win over the events'; both are null for an event of no user.
 */
export function addUserAtEvent(row: Row, histories: ReadonlyMap<number, UserHistory>, own: OwnUserProperties): Row {
  const svcId = row.svc_id === null || row.svc_id === undefined ? undefined : Number(row.svc_id);
  const history = svcId === undefined ? undefined : histories.get(svcId);
  const seq = Number(row.ingest_seq);
  const profile = history && versionAt(history.versions, seq);
  const paying = profileText(profile, 'paying');
  row[AT_EVENT.userProperties] = userPropertiesAt(row.event_type as string, profile, own);
  row[AT_EVENT.paying] = svcId === undefined ? null : paying !== null ? paying === 'true' : history?.firstPaidSeq != null && history.firstPaidSeq <= seq;
  row[AT_EVENT.startVersion] = profileText(profile, 'start_version') ?? history?.startVersion ?? null;
  return row;
}

/**
 * The profile versions of the users `ofUsers` (a condition on `svc_id`) in force from ingest_seq
 * `first` to `last`: each user's last one before `first`, and those from `first` to `last`, by
 * ingest_seq (SQL of both engines): a range's versions without all the users' history.
 */
function versionsInForceSql(appId: number, ofUsers: string, first: number, last: number, columns: string): string {
  const app = `app_id = ${Math.trunc(appId)} AND ${ofUsers}`;
  return `SELECT svc_id, ingest_seq, ${columns} FROM profile_versions WHERE ${app} AND ingest_seq <= ${Math.trunc(last)}
    AND (ingest_seq >= ${Math.trunc(first)} OR (svc_id, ingest_seq) IN (SELECT svc_id, max(ingest_seq) FROM profile_versions WHERE ${app} AND ingest_seq < ${Math.trunc(first)} GROUP BY svc_id))
    ORDER BY ingest_seq`;
}

/** How an engine reads a profile version: the columns selected, and the version's text and split from a row of them. */
export interface VersionColumns {
  sql: string;
  read(row: Row): Omit<ProfileVersion, 'seq'>;
}

/**
 * The histories of the users `ofUsers` (a condition on `svc_id`) over their events from
 * ingest_seq `first` to `last` (SQL of both engines): per user the first app_version and the
 * first revenue event (kept at load), and the profile versions in force over the range.
 */
export async function userHistories(
  query: (sql: string) => Promise<Row[]>,
  dialect: Pick<Dialect, 'userSummaries'>,
  appId: number,
  ofUsers: string,
  [first, last]: readonly [number, number],
  versionColumns: VersionColumns,
): Promise<Map<number, UserHistory>> {
  const summaries = await query(dialect.userSummaries(appId, ofUsers));
  const histories = new Map<number, UserHistory>();
  for (const row of summaries) {
    const firstPaid = row.first_paid === null || row.first_paid === undefined ? null : Number(row.first_paid);
    histories.set(Number(row.svc_id), { versions: [], startVersion: (row.start_version as string | null) ?? null, firstPaidSeq: firstPaid });
  }
  for (const row of await query(versionsInForceSql(appId, ofUsers, first, last, versionColumns.sql))) {
    histories.get(Number(row.svc_id))?.versions.push({ seq: Number(row.ingest_seq), ...versionColumns.read(row) });
  }
  return histories;
}
