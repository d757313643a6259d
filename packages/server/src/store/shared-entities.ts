// The entities both engines keep in SQL through a SqlSession: deletion jobs, user mappings and
// feedback. The DuckDB engine keeps them in its own database (its session), the ClickHouse
// engine in a shared SQL store (PostgreSQL in production), beside its cohort memberships and
// a mirror of the mappings for reporting in ClickHouse (clickhouse/tables.ts).
// Their SQL is portable between PostgreSQL and DuckDB: `$n` placeholders, ON CONFLICT, RETURNING.
import type { IdentityBatch } from './identity.js';
import { EntityTables } from './entity-tables.js';
import { IdentityLookups } from './identity-lookups.js';
import type { DeletionEntry, DeletionJobRecord, DeletionStore, FeedbackStore, FeedbackUpsert, SqlSession, SqlValue, StoredConversationPart, StoredFeedbackItem, UserMappingChange, UserMappingStore, UserMappingView } from './types.js';

type Session = Omit<SqlSession, 'transaction'>;

/** A mapping to store: project, from `svc_id`, to `svc_id` (null: unmapped), their user ids. */
export type UserMappingRow = [appId: number, from: number, to: number | null, fromUser: string, toUser: string | null];

/** The rows of mapping changes in every project of `appIds`; both users get an `svc_id` in `batch` if they have none. */
export function userMappingRows(batch: IdentityBatch, appIds: number[], changes: UserMappingChange[]): UserMappingRow[] {
  return appIds.flatMap((appId) =>
    changes.map(({ userId, globalUserId }): UserMappingRow => [appId, batch.resolve(appId, userId, null)!, globalUserId === null ? null : batch.resolve(appId, globalUserId, null)!, userId, globalUserId]),
  );
}

const SCHEMA = [
  'CREATE TABLE IF NOT EXISTS deletion_jobs (app_id INTEGER, day VARCHAR, scrubbed_on VARCHAR, PRIMARY KEY (app_id, day))',
  'CREATE TABLE IF NOT EXISTS deletion_entries (app_id INTEGER, day VARCHAR, svc_id BIGINT, requester VARCHAR, requested_on_day VARCHAR, PRIMARY KEY (app_id, day, svc_id))',
  'CREATE TABLE IF NOT EXISTS user_mappings (app_id INTEGER, from_svc BIGINT, to_svc BIGINT, from_user VARCHAR, to_user VARCHAR, PRIMARY KEY (app_id, from_svc))',
  'CREATE TABLE IF NOT EXISTS feedback_items (app_id INTEGER, source_id VARCHAR, unique_id VARCHAR, body VARCHAR, author VARCHAR, email VARCHAR, user_id VARCHAR, url VARCHAR, created_at VARCHAR, PRIMARY KEY (app_id, source_id, unique_id))',
  'CREATE SEQUENCE IF NOT EXISTS feedback_part_order',
  "CREATE TABLE IF NOT EXISTS feedback_parts (app_id INTEGER, source_id VARCHAR, item_id VARCHAR, unique_id VARCHAR, body VARCHAR, author VARCHAR, email VARCHAR, user_id VARCHAR, url VARCHAR, created_at VARCHAR, part_order BIGINT DEFAULT nextval('feedback_part_order'), PRIMARY KEY (app_id, source_id, item_id, unique_id))",
];

const FEEDBACK_FIELDS = ['body', 'author', 'email', 'user_id', 'url', 'created_at'] as const;
const placeholders = (from: number, count: number) => Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ');

export class SharedEntities extends EntityTables {
  constructor(sql: SqlSession) {
    super(sql, SCHEMA);
  }

  /**
   * Creates the tables once. An engine whose session runs one statement sequence at a time
   * (DuckDB) calls it at open: inside its own transaction the creation would wait for the
   * transaction to end.
   */
  override tables(): Promise<void> {
    return super.tables();
  }

  private async rows(sql: string, values?: SqlValue[]): Promise<Record<string, unknown>[]> {
    await this.tables();
    return this.sql.rows(sql, values);
  }

  async transaction<T>(work: (session: Session) => Promise<T>): Promise<T> {
    await this.tables();
    return this.sql.transaction(work);
  }

  /** `work` in the caller's transaction (`session`) when given one, else in a transaction of its own. */
  private async within<T>(session: Session | undefined, work: (session: Session) => Promise<T>): Promise<T> {
    if (!session) return this.transaction(work);
    await this.tables();
    return work(session);
  }

  async stagingDeletionJob(appId: number, today: string): Promise<string | undefined> {
    const [row] = await this.rows('SELECT min(day) AS day FROM deletion_jobs WHERE app_id = $1 AND day > $2', [appId, today]);
    return (row?.day as string | null) ?? undefined;
  }

  addDeletionEntries(appId: number, day: string, entries: DeletionEntry[]): Promise<void> {
    return this.transaction(async (tx) => {
      await tx.run('INSERT INTO deletion_jobs VALUES ($1, $2, NULL) ON CONFLICT DO NOTHING', [appId, day]);
      for (const entry of entries) {
        await tx.run('INSERT INTO deletion_entries VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING', [appId, day, entry.svcId, entry.requester, entry.requestedOnDay]);
      }
    });
  }

  async deletionJobs(appId: number, fromDay: string, toDay: string): Promise<DeletionJobRecord[]> {
    const jobs = await this.rows('SELECT day, scrubbed_on FROM deletion_jobs WHERE app_id = $1 AND day >= $2 AND day <= $3 ORDER BY day', [appId, fromDay, toDay]);
    const result: DeletionJobRecord[] = [];
    for (const job of jobs) {
      const entries = await this.doomed(appId, job.day as string);
      result.push({ appId, day: job.day as string, scrubbedOn: (job.scrubbed_on as string | null) ?? null, entries });
    }
    return result;
  }

  /** The entries of a job, by `svc_id`. */
  async doomed(appId: number, day: string, session: Session = this.sql): Promise<DeletionEntry[]> {
    await this.tables();
    const rows = await session.rows('SELECT svc_id, requester, requested_on_day FROM deletion_entries WHERE app_id = $1 AND day = $2 ORDER BY svc_id', [appId, day]);
    return rows.map((e) => ({ svcId: Number(e.svc_id), requester: (e.requester as string | null) ?? null, requestedOnDay: e.requested_on_day as string }));
  }

  async removeDeletionEntry(appId: number, day: string, svcId: number): Promise<boolean> {
    return (await this.rows('DELETE FROM deletion_entries WHERE app_id = $1 AND day = $2 AND svc_id = $3 RETURNING svc_id', [appId, day, svcId])).length > 0;
  }

  async dueDeletionJobs(today: string): Promise<{ appId: number; day: string }[]> {
    const rows = await this.rows('SELECT app_id, day FROM deletion_jobs WHERE day <= $1 AND scrubbed_on IS NULL ORDER BY day', [today]);
    return rows.map((r) => ({ appId: Number(r.app_id), day: r.day as string }));
  }

  /** Removes the users' mappings and records the scrub (in `session`'s transaction, if given). */
  recordScrub(appId: number, day: string, svcIds: number[], today: string, session?: Session): Promise<void> {
    return this.within(session, async (tx) => {
      if (svcIds.length > 0) {
        const list = placeholders(2, svcIds.length);
        await tx.run(`DELETE FROM user_mappings WHERE app_id = $1 AND (from_svc IN (${list}) OR to_svc IN (${list}))`, [appId, ...svcIds]);
      }
      await tx.run('UPDATE deletion_jobs SET scrubbed_on = $1 WHERE app_id = $2 AND day = $3', [today, appId, day]);
    });
  }

  /** Stores mappings (`to` null: unmapped), in `session`'s transaction if given. */
  applyUserMappings(rows: UserMappingRow[], session?: Session): Promise<void> {
    return this.within(session, async (tx) => {
      for (const [appId, from, to, fromUser, toUser] of rows) {
        await tx.run('DELETE FROM user_mappings WHERE app_id = $1 AND from_svc = $2', [appId, from]);
        if (to !== null) await tx.run('INSERT INTO user_mappings VALUES ($1, $2, $3, $4, $5)', [appId, from, to, fromUser, toUser]);
      }
    });
  }

  /** Every project's current mappings, `[app_id, from_svc, to_svc]`. */
  async allUserMappings(): Promise<[number, number, number][]> {
    return (await this.rows('SELECT app_id, from_svc, to_svc FROM user_mappings')).map((r) => [Number(r.app_id), Number(r.from_svc), Number(r.to_svc)]);
  }

  async mappingsOf(appId: number, svcId: number): Promise<{ mappedFrom: { svcId: number; userId: string }[]; mappedTo: { svcId: number; userId: string }[] }> {
    const mapped = async (sql: string) => (await this.rows(sql, [appId, svcId])).map((r) => ({ svcId: Number(r.svc_id), userId: r.user_id as string }));
    return {
      mappedFrom: await mapped('SELECT from_svc AS svc_id, from_user AS user_id FROM user_mappings WHERE app_id = $1 AND to_svc = $2 ORDER BY from_user'),
      mappedTo: await mapped('SELECT to_svc AS svc_id, to_user AS user_id FROM user_mappings WHERE app_id = $1 AND from_svc = $2'),
    };
  }

  async feedbackItem(appId: number, sourceId: string, uniqueId: string): Promise<StoredFeedbackItem | undefined> {
    const columns = `unique_id, ${FEEDBACK_FIELDS.join(', ')}`;
    const [item] = await this.rows(`SELECT ${columns} FROM feedback_items WHERE app_id = $1 AND source_id = $2 AND unique_id = $3`, [appId, sourceId, uniqueId]);
    if (!item) return undefined;
    const parts = await this.rows(`SELECT ${columns} FROM feedback_parts WHERE app_id = $1 AND source_id = $2 AND item_id = $3 ORDER BY part_order`, [appId, sourceId, uniqueId]);
    return { ...(item as unknown as StoredFeedbackItem), conversation_parts: parts as unknown as StoredConversationPart[] };
  }

  upsertFeedbackItems(appId: number, sourceId: string, items: FeedbackUpsert[], now: string): Promise<void> {
    const value = (record: Record<string, unknown>, field: string) => (record[field] === undefined ? null : (record[field] as string));
    // Absent fields keep the stored value; a stored created_at is kept unless one is sent.
    const updates = (table: string, createdAt: string) =>
      FEEDBACK_FIELDS.map((f) => (f === 'created_at' ? `created_at = coalesce(${createdAt}, ${table}.created_at)` : `${f} = coalesce(excluded.${f}, ${table}.${f})`)).join(', ');
    return this.transaction(async (tx) => {
      for (const item of items) {
        await tx.run(
          `INSERT INTO feedback_items VALUES ($1, $2, $3, $4, $5, $6, $7, $8, coalesce($9, $10))
           ON CONFLICT (app_id, source_id, unique_id) DO UPDATE SET ${updates('feedback_items', '$9')}`,
          [appId, sourceId, item.unique_id, ...FEEDBACK_FIELDS.slice(0, 5).map((f) => value(item, f)), value(item, 'created_at'), now],
        );
        for (const part of item.conversation_parts ?? []) {
          await tx.run(
            `INSERT INTO feedback_parts (app_id, source_id, item_id, unique_id, ${FEEDBACK_FIELDS.join(', ')}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, coalesce($10, $11))
             ON CONFLICT (app_id, source_id, item_id, unique_id) DO UPDATE SET ${updates('feedback_parts', '$10')}`,
            [appId, sourceId, item.unique_id, part.unique_id, ...FEEDBACK_FIELDS.slice(0, 5).map((f) => value(part, f)), value(part, 'created_at'), now],
          );
        }
      }
    });
  }
}

/** The entity store methods both engines answer from their SharedEntities alone. */
export abstract class SharedEntityEngine
  extends IdentityLookups
  implements Pick<DeletionStore, 'stagingDeletionJob' | 'addDeletionEntries' | 'deletionJobs' | 'removeDeletionEntry' | 'dueDeletionJobs'>, Pick<UserMappingStore, 'userMappings'>, FeedbackStore
{
  protected abstract readonly entities: SharedEntities;

  stagingDeletionJob(appId: number, today: string): Promise<string | undefined> {
    return this.entities.stagingDeletionJob(appId, today);
  }

  addDeletionEntries(appId: number, day: string, entries: DeletionEntry[]): Promise<void> {
    return this.entities.addDeletionEntries(appId, day, entries);
  }

  deletionJobs(appId: number, fromDay: string, toDay: string): Promise<DeletionJobRecord[]> {
    return this.entities.deletionJobs(appId, fromDay, toDay);
  }

  removeDeletionEntry(appId: number, day: string, svcId: number): Promise<boolean> {
    return this.entities.removeDeletionEntry(appId, day, svcId);
  }

  dueDeletionJobs(today: string): Promise<{ appId: number; day: string }[]> {
    return this.entities.dueDeletionJobs(today);
  }

  async userMappings(appId: number, userIds: string[]): Promise<Map<string, UserMappingView>> {
    const views = new Map<string, UserMappingView>();
    for (const userId of userIds) {
      const svcId = this.identities.userSvcId(appId, userId);
      if (svcId === undefined) continue;
      views.set(userId, { svcId, ...(await this.entities.mappingsOf(appId, svcId)) });
    }
    return views;
  }

  feedbackItem(appId: number, sourceId: string, uniqueId: string): Promise<StoredFeedbackItem | undefined> {
    return this.entities.feedbackItem(appId, sourceId, uniqueId);
  }

  upsertFeedbackItems(appId: number, sourceId: string, items: FeedbackUpsert[], now: string): Promise<void> {
    return this.entities.upsertFeedbackItems(appId, sourceId, items, now);
  }
}
