// The Export API on ClickHouse: the user's state at each exported event (../user-at-event.ts),
// added to the rows in JavaScript. 18.16 has no ASOF JOIN, so the histories of a range's users
// are read beside its rows, bounded by the range: the profile versions of its users from the
// last one before its first event to its last event, and per user the first app_version and
// the first revenue event.
import { rangeCondition } from '../exported-events.js';
import { addUserAtEvent, type UserHistory, versionsInForceSql } from '../user-at-event.js';
import type { ClickHouseEvents } from './events.js';

type Row = Record<string, unknown>;

/** The event columns the state is computed from, besides those every line reads. */
export const USER_STATE_EXTRA_COLUMNS = ['user_property_keys', 'user_property_values'];

/** The histories of the users of the project's events of [fromMs, toMs), by `svc_id`. */
export async function exportedUsers(store: ClickHouseEvents, appId: number, fromMs: number, toMs: number): Promise<Map<number, UserHistory>> {
  const range = rangeCondition(appId, fromMs, toMs);
  const [bounds] = await store.query(`SELECT count() AS events, min(ingest_seq) AS first, max(ingest_seq) AS last FROM events WHERE ${range} AND svc_id IS NOT NULL`);
  const histories = new Map<number, UserHistory>();
  if (!bounds || Number(bounds.events) === 0) return histories;
  const [first, last] = [Math.trunc(Number(bounds.first)), Math.trunc(Number(bounds.last))];
  const users = `svc_id GLOBAL IN (SELECT assumeNotNull(svc_id) FROM events WHERE ${range} AND svc_id IS NOT NULL)`;
  const summaries = await store.query(
    `SELECT svc_id, argMin(app_version, ingest_seq) AS start_version, countIf(revenue IS NOT NULL) AS paid, minIf(ingest_seq, revenue IS NOT NULL) AS first_paid
     FROM events WHERE app_id = ${Math.trunc(appId)} AND ${users} GROUP BY svc_id`,
  );
  for (const row of summaries) {
    histories.set(Number(row.svc_id), { versions: [], startVersion: (row.start_version as string | null) ?? null, firstPaidSeq: Number(row.paid) > 0 ? Number(row.first_paid) : null });
  }
  const versions = await store.query(versionsInForceSql(appId, users, first, last, 'properties, property_keys, property_values'));
  for (const row of versions) {
    histories.get(Number(row.svc_id))?.versions.push({ seq: Number(row.ingest_seq), text: row.properties as string, keys: row.property_keys as string[], values: row.property_values as string[] });
  }
  return histories;
}

/** The row with the user's state at its event (../user-at-event.ts), its own user properties from the split columns. */
export const withUserAtEvent = (row: Row, histories: ReadonlyMap<number, UserHistory>): Row =>
  addUserAtEvent(row, histories, { text: (row.user_properties as string | null) ?? null, keys: row.user_property_keys as string[], values: row.user_property_values as string[] });
