// The user's state at each event of a user activity page (store/user-at-event.ts): its events are
// written as Export API lines, with the same user properties, `paying` and `start_version` as
// the export writes. Read per page, for the user's own ids only.
import { integers } from '../../store/dialect.js';
import { addUserAtEvent, splitText, userHistories } from '../../store/user-at-event.js';
import type { RunnerContext } from './context.js';

type Row = Record<string, unknown>;

/** The user's events (rows of EXPORT_COLUMNS, JSON as text) with the user's state at each. */
export async function withUserState(ctx: RunnerContext, members: readonly number[], rows: Row[]): Promise<Row[]> {
  if (rows.length === 0) return rows;
  const seqs = rows.map((row) => Number(row.ingest_seq));
  const users = await userHistories((sql) => ctx.query(sql), ctx.dialect, ctx.appId, `svc_id IN (${integers(members)})`, [Math.min(...seqs), Math.max(...seqs)], {
    sql: `${ctx.dialect.jsonText('properties')} AS properties`,
    read: (row) => ({ text: String(row.properties), ...splitText(String(row.properties)) }),
  });
  return rows.map((row) => {
    const text = (row.user_properties as string | null) ?? null;
    return addUserAtEvent(row, users, { text, ...splitText(text) });
  });
}
