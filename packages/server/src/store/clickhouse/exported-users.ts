// The Export API on ClickHouse: the user's state at each exported event (../user-at-event.ts),
// added to the rows in JavaScript. 18.16 has no ASOF JOIN, so the histories of a range's users
// are read beside its rows, bounded by the range.
import { rangeCondition } from '../exported-events.js';
import { addUserAtEvent, type UserHistory, userHistories } from '../user-at-event.js';
import { ClickHouseDialect } from './dialect.js';
import type { ClickHouseEvents } from './events.js';

type Row = Record<string, unknown>;

const dialect = new ClickHouseDialect();

/** The event columns the state is computed from, besides those every line reads. */
export const USER_STATE_EXTRA_COLUMNS = ['user_property_keys', 'user_property_values'];

/** The histories of the users of the project's events of [fromMs, toMs), by `svc_id`. */
export async function exportedUsers(store: ClickHouseEvents, appId: number, fromMs: number, toMs: number): Promise<Map<number, UserHistory>> {
  const range = rangeCondition(appId, fromMs, toMs);
  const [bounds] = await store.query(`SELECT count() AS events, min(ingest_seq) AS first, max(ingest_seq) AS last FROM events WHERE ${range} AND svc_id IS NOT NULL`);
  if (!bounds || Number(bounds.events) === 0) return new Map();
  const users = `svc_id GLOBAL IN (SELECT assumeNotNull(svc_id) FROM events WHERE ${range} AND svc_id IS NOT NULL)`;
  return userHistories((sql) => store.query(sql), dialect, appId, users, [Math.trunc(Number(bounds.first)), Math.trunc(Number(bounds.last))], {
    sql: 'properties, property_keys, property_values',
    read: (row) => ({ text: row.properties as string, keys: row.property_keys as string[], values: row.property_values as string[] }),
  });
}

/** The row with the user's state at its event (../user-at-event.ts), its own user properties from the split columns. */
export const withUserAtEvent = (row: Row, histories: ReadonlyMap<number, UserHistory>): Row =>
  addUserAtEvent(row, histories, { text: (row.user_properties as string | null) ?? null, keys: row.user_property_keys as string[], values: row.user_property_values as string[] });
