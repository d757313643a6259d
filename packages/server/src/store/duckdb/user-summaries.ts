// What the Export API reads of each user's whole history, kept as segments load: the first event
// with an app_version (`start_version`) and the first with a revenue (`paying` from then on).
// An hour's export reads its users' rows here instead of every event of those users (300-850 ms
// an hour at 10 million events). Loads only append later events, so a user's row changes only
// where it has no value yet; a merge folds the merged user's row into its target's (the earlier
// of each); a deletion removes the users' rows. The table is in schema.ts.
import type { DuckDBConnection } from '@duckdb/node-api';
import { rowsOf } from './results.js';

/** A SELECT of `svc_id, start_version, first_paid` (ingest_seq, null for none) of the project's users that `ofUsers` holds. */
export const userSummariesSql = (appId: number, ofUsers = 'true') =>
  `SELECT svc_id, start_version, first_paid_seq AS first_paid FROM user_summaries WHERE app_id = ${Math.trunc(appId)} AND ${ofUsers}`;

/** Rows of `source` (app_id, svc_id, start_seq, start_version, first_paid_seq) merged in: the earlier of each. */
const upsert = (source: string) => `INSERT INTO user_summaries ${source}
  ON CONFLICT (app_id, svc_id) DO UPDATE SET
    start_version = CASE WHEN user_summaries.start_seq IS NULL OR excluded.start_seq < user_summaries.start_seq THEN excluded.start_version ELSE user_summaries.start_version END,
    start_seq = least(user_summaries.start_seq, excluded.start_seq),
    first_paid_seq = least(user_summaries.first_paid_seq, excluded.first_paid_seq)`;

const summariesOf = (where: string) => `SELECT app_id, svc_id, min(ingest_seq) FILTER (WHERE app_version IS NOT NULL) AS start_seq,
    arg_min(app_version, ingest_seq) FILTER (WHERE app_version IS NOT NULL) AS start_version, min(ingest_seq) FILTER (WHERE revenue IS NOT NULL) AS first_paid_seq
  FROM events WHERE svc_id IS NOT NULL${where} GROUP BY app_id, svc_id`;

/**
 * The events loaded after ingest_seq `afterSeq` (their svc_ids final, merges applied) counted in.
 * Only new users' rows and those the events give a first value change: an update of every
 * user of the segment cost most of the statement.
 */
export async function summarizeLoadedEvents(connection: DuckDBConnection, afterSeq: number): Promise<void> {
  const changing = `SELECT n.* FROM (${summariesOf(` AND ingest_seq > ${Math.trunc(afterSeq)}`)}) n LEFT JOIN user_summaries o USING (app_id, svc_id)
    WHERE o.svc_id IS NULL OR (n.start_seq IS NOT NULL AND o.start_seq IS NULL) OR (n.first_paid_seq IS NOT NULL AND o.first_paid_seq IS NULL)`;
  await connection.run(upsert(changing));
}

/** The rows of the users merged in this load (`svc_merges_changes`) folded into their targets'. */
export async function foldMergedSummaries(connection: DuckDBConnection): Promise<void> {
  await connection.run(
    upsert(`SELECT s.app_id, m.to_svc, min(s.start_seq), arg_min(s.start_version, s.start_seq), min(s.first_paid_seq)
      FROM user_summaries s JOIN svc_merges_changes m ON s.svc_id = m.from_svc GROUP BY s.app_id, m.to_svc`),
  );
  await connection.run('DELETE FROM user_summaries WHERE svc_id IN (SELECT from_svc FROM svc_merges_changes)');
}

/** Every row again from the events: at open when the table is new (or empty beside identified events). */
export async function rebuildUserSummaries(connection: DuckDBConnection): Promise<void> {
  await connection.run('DELETE FROM user_summaries');
  await connection.run(`INSERT INTO user_summaries ${summariesOf('')}`);
}

/** Whether the rows are missing: none while events of users are stored. */
export async function userSummariesMissing(connection: DuckDBConnection): Promise<boolean> {
  const [row] = await rowsOf(connection, 'SELECT (SELECT count(*) FROM user_summaries) = 0 AND EXISTS (SELECT 1 FROM events WHERE svc_id IS NOT NULL) AS missing');
  return row?.missing === true;
}
