// The ClickHouse engine's dedupe against other processes: events whose insert_id another
// process stored within the window (each process's own window drops the repeats it sees).
// A process with a journal id asks only when another journal loaded the project's events within
// the window: an event stored by another process was loaded after it was received, so
// without such a load there is nothing to find, and the query (a segment's ids in its text)
// is skipped. Without a journal id the process cannot tell its
// own segments from others' and always asks.
import type { ClickHouseEvents } from './events.js';
import type { SegmentScan } from './segment-lines.js';
import { literal } from './sql-text.js';

/**
 * Whether another journal than `journalId` loaded events of the project at or after `since`
 * (ms): its loads of other projects hold none of this project's insert ids. Loads recorded
 * before loads were per project (app 0 with an ingest_seq; a whole segment's record has none) count for every project.
 */
async function othersLoadedSince(store: ClickHouseEvents, journalId: string, appId: number, since: number): Promise<boolean> {
  const [row] = await store.query(
    `SELECT count() AS n FROM loaded_segments WHERE (app_id = ${Math.trunc(appId)} OR (app_id = 0 AND last_ingest_seq > 0)) AND loaded_at >= ${Math.trunc(since)} AND position(name, '/') > 0 AND NOT startsWith(name, ${literal(`${journalId}/`)})`,
  );
  return Number(row!.n) > 0;
}

/**
 * Which of the lines `loading` marks (1) are not events whose insert_id another journal stored
 * within `windowMs` before them (1: kept).
 */
export async function withoutStoredRepeats(store: ClickHouseEvents, scan: SegmentScan, loading: Uint8Array, appId: number, windowMs: number, journalId: string): Promise<Uint8Array> {
  const keyOf = (appId: number, insertId: string) => `${appId}:${insertId}`;
  const kept = Uint8Array.from(loading);
  const candidates: number[] = [];
  for (let index = 0; index < kept.length; index++) if (kept[index] === 1 && scan.held[index] === 0 && scan.insertIds[index] !== null) candidates.push(index);
  if (candidates.length === 0) return kept;
  const since = candidates.reduce((oldest, index) => Math.min(oldest, scan.uploadTimes[index]!), Infinity) - windowMs;
  if (journalId !== '' && !(await othersLoadedSince(store, journalId, appId, since))) return kept;
  const ownRows = journalId === '' ? '' : ` AND NOT startsWith(segment, ${literal(`${journalId}/`)})`;
  // The ids as one array literal, not a list of literals: 18.16 parses the array ~6 times
  // faster (a node of the syntax tree, not one per id), which a large segment's ~110k ids make
  // most of the query's time when few rows are read.
  const ids = `[${candidates.map((index) => literal(scan.insertIds[index]!)).join(', ')}]`;
  const query = `SELECT app_id, insert_id, max(server_upload_time) AS stored_at FROM events
    WHERE server_upload_time >= ${Math.trunc(since)}${ownRows} AND app_id = ${Math.trunc(appId)}
    AND insert_id IN (SELECT arrayJoin(${ids})) GROUP BY app_id, insert_id`;
  // Room for a whole segment's ids (the default is 256 KiB of text).
  const room = { max_query_size: String(query.length + 1024) };
  const rows = await store.read(async (client) => (await client.query({ query, format: 'JSONEachRow', clickhouse_settings: room })).json<Record<string, unknown>>());
  const stored = new Map<string, number>();
  for (const row of rows) stored.set(keyOf(Number(row.app_id), row.insert_id as string), Number(row.stored_at));
  for (const index of candidates) {
    const storedAt = stored.get(keyOf(scan.appIds[index]!, scan.insertIds[index]!));
    if (storedAt !== undefined && storedAt >= scan.uploadTimes[index]! - windowMs) kept[index] = 0;
  }
  return kept;
}
