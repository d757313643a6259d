// The user's state at each event of a user activity page (store/user-at-event.ts): its events are
// written as Export API lines, with the same user properties, `paying` and `start_version` as
// the export writes. Read per page, for the user's own ids only: the profile versions in force
// over the page, and each id's first event with an app_version and first with a revenue.
import { integers } from '../../store/dialect.js';
import { addUserAtEvent, splitText, type UserHistory, versionsInForceSql } from '../../store/user-at-event.js';
import type { RunnerContext } from './context.js';

type Row = Record<string, unknown>;

const seqOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/** The histories of the user's own ids (`members`) over events from ingest_seq `first` to `last`. */
async function histories(ctx: RunnerContext, members: readonly number[], first: number, last: number): Promise<Map<number, UserHistory>> {
  const ofUsers = `svc_id IN (${integers(members)})`;
  const firsts = await ctx.query(
    `SELECT svc_id, min(CASE WHEN app_version IS NOT NULL THEN ingest_seq END) AS versioned, min(CASE WHEN revenue IS NOT NULL THEN ingest_seq END) AS paid
     FROM events WHERE app_id = ${ctx.appId} AND ${ofUsers} GROUP BY svc_id`,
  );
  const versionedSeqs = firsts.flatMap((row) => (row.versioned === null ? [] : [Number(row.versioned)]));
  const startVersions =
    versionedSeqs.length === 0 ? [] : await ctx.query(`SELECT svc_id, app_version FROM events WHERE app_id = ${ctx.appId} AND ingest_seq IN (${integers(versionedSeqs)})`);
  const users = new Map<number, UserHistory>(firsts.map((row) => [Number(row.svc_id), { versions: [], startVersion: null, firstPaidSeq: seqOrNull(row.paid) }]));
  for (const row of startVersions) users.get(Number(row.svc_id))!.startVersion = String(row.app_version);
  for (const row of await ctx.query(versionsInForceSql(ctx.appId, ofUsers, first, last, `${ctx.dialect.jsonText('properties')} AS properties`))) {
    const text = String(row.properties);
    users.get(Number(row.svc_id))?.versions.push({ seq: Number(row.ingest_seq), text, ...splitText(text) });
  }
  return users;
}

/** The user's events (rows of EXPORT_COLUMNS, JSON as text) with the user's state at each. */
export async function withUserState(ctx: RunnerContext, members: readonly number[], rows: Row[]): Promise<Row[]> {
  if (rows.length === 0) return rows;
  const seqs = rows.map((row) => Number(row.ingest_seq));
  const users = await histories(ctx, members, Math.min(...seqs), Math.max(...seqs));
  return rows.map((row) => {
    const text = (row.user_properties as string | null) ?? null;
    return addUserAtEvent(row, users, { text, ...splitText(text) });
  });
}
