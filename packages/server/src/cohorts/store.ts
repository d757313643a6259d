// Uploaded cohorts and their export jobs in the engine's own tables (per project). Members
// live in `cohort_members`, which the reporting dialect reads for `userdata_cohort` segments
// and the deletion scrub empties of deleted users.
import { randomBytes } from 'node:crypto';
import { EntityTables } from '../store/entity-tables.js';
import type { SqlSession } from '../store/types.js';

const COHORT_TABLES = `
CREATE TABLE IF NOT EXISTS cohorts (id VARCHAR PRIMARY KEY, app_id INTEGER, name VARCHAR, owner VARCHAR, published BOOLEAN, created_at BIGINT, last_mod BIGINT);
CREATE TABLE IF NOT EXISTS cohort_exports (request_id VARCHAR PRIMARY KEY, app_id INTEGER, cohort_id VARCHAR, prop_keys VARCHAR, requested_at BIGINT, file VARCHAR);
`;

export interface StoredCohort {
  id: string;
  name: string;
  owner: string;
  published: boolean;
  /** Epoch ms. */
  createdAt: number;
  lastMod: number;
  size: number;
}

export interface CohortExportJob {
  requestId: string;
  cohortId: string;
  /** The user properties of the file; null without `props=1`, empty for all. */
  propKeys: string[] | null;
  requestedAt: number;
  /** The CSV once the job has completed. */
  file: string | null;
}

const newId = () => randomBytes(5).toString('hex').slice(0, 7);

export class CohortStore extends EntityTables {
  constructor(sql: SqlSession) {
    super(sql, COHORT_TABLES);
  }

  async cohorts(appId: number): Promise<StoredCohort[]> {
    await this.tables();
    const rows = await this.sql.rows(
      `SELECT c.*, (SELECT count(*) FROM cohort_members m WHERE m.app_id = c.app_id AND m.cohort_id = c.id) AS size FROM cohorts c WHERE c.app_id = ? ORDER BY c.created_at, c.id`,
      [appId],
    );
    return rows.map((r) => ({ id: r.id as string, name: r.name as string, owner: r.owner as string, published: r.published as boolean, createdAt: Number(r.created_at), lastMod: Number(r.last_mod), size: Number(r.size) }));
  }

  async cohort(appId: number, id: string): Promise<StoredCohort | undefined> {
    return (await this.cohorts(appId)).find((c) => c.id === id);
  }

  /** Creates a cohort, or replaces the members of `existingId`, in one transaction; its id. */
  async save(appId: number, cohort: { name: string; owner: string; published: boolean; existingId?: string }, svcIds: readonly number[], now: number): Promise<string> {
    await this.tables();
    const id = cohort.existingId ?? newId();
    await this.sql.transaction(async (tx) => {
      if (cohort.existingId) {
        await tx.run('UPDATE cohorts SET name = ?, owner = ?, published = ?, last_mod = ? WHERE app_id = ? AND id = ?', [cohort.name, cohort.owner, cohort.published, now, appId, id]);
        await tx.run('DELETE FROM cohort_members WHERE app_id = ? AND cohort_id = ?', [appId, id]);
      } else {
        await tx.run('INSERT INTO cohorts VALUES (?, ?, ?, ?, ?, ?, ?)', [id, appId, cohort.name, cohort.owner, cohort.published, now, now]);
      }
      await insertMembers(tx, appId, id, svcIds);
    });
    return id;
  }

  /** Applies additions and removals in order, in one transaction. */
  async changeMembers(appId: number, cohortId: string, changes: readonly { add: boolean; svcIds: readonly number[] }[], now: number): Promise<void> {
    await this.tables();
    await this.sql.transaction(async (tx) => {
      for (const change of changes) {
        await tx.run(`DELETE FROM cohort_members WHERE app_id = ? AND cohort_id = ? AND svc_id IN (SELECT unnest(?::BIGINT[]))`, [appId, cohortId, JSON.stringify(change.svcIds)]);
        if (change.add) await insertMembers(tx, appId, cohortId, change.svcIds);
      }
      await tx.run('UPDATE cohorts SET last_mod = ? WHERE app_id = ? AND id = ?', [now, appId, cohortId]);
    });
  }

  async members(appId: number, cohortId: string): Promise<number[]> {
    await this.tables();
    return (await this.sql.rows('SELECT svc_id FROM cohort_members WHERE app_id = ? AND cohort_id = ? ORDER BY svc_id', [appId, cohortId])).map((r) => Number(r.svc_id));
  }

  async requestExport(appId: number, cohortId: string, propKeys: string[] | null, now: number, requestId: string): Promise<void> {
    await this.tables();
    await this.sql.run('INSERT INTO cohort_exports VALUES (?, ?, ?, ?, ?, NULL)', [requestId, appId, cohortId, propKeys === null ? null : JSON.stringify(propKeys), now]);
  }

  /**
   * The user properties of `svcIds` by column name: custom ones of each profile as `gp:name`,
   * and the built-ins (`builtIns`: name → events column) from the user's latest event.
   */
  async userProperties(appId: number, svcIds: readonly number[], builtIns: ReadonlyMap<string, string>): Promise<Map<number, Map<string, string>>> {
    const result = new Map<number, Map<string, string>>(svcIds.map((svcId) => [svcId, new Map()]));
    if (svcIds.length === 0) return result;
    const ids = JSON.stringify(svcIds);
    for (const row of await this.sql.rows(`SELECT svc_id, properties FROM profiles WHERE app_id = ? AND svc_id IN (SELECT unnest(?::BIGINT[]))`, [appId, ids])) {
      const values = result.get(Number(row.svc_id))!;
      for (const [name, value] of Object.entries(JSON.parse(row.properties as string) as Record<string, unknown>)) {
        if (value !== null && value !== undefined) values.set(`gp:${name}`, typeof value === 'string' ? value : JSON.stringify(value));
      }
    }
    const columns = [...builtIns].map(([name, column]) => `arg_max(${column}, time) AS "${name}"`).join(', ');
    for (const row of await this.sql.rows(`SELECT svc_id, ${columns} FROM events WHERE app_id = ? AND svc_id IN (SELECT unnest(?::BIGINT[])) GROUP BY svc_id`, [appId, ids])) {
      const values = result.get(Number(row.svc_id))!;
      for (const name of builtIns.keys()) if (row[name] !== null && row[name] !== undefined) values.set(name, String(row[name]));
    }
    return result;
  }

  async completeExport(requestId: string, file: string): Promise<void> {
    await this.sql.run('UPDATE cohort_exports SET file = ? WHERE request_id = ?', [file, requestId]);
  }

  async exportJob(appId: number, requestId: string): Promise<CohortExportJob | undefined> {
    const job = await this.exportJobById(requestId);
    return job?.appId === appId ? job : undefined;
  }

  /** A job whatever its project: for a signed link, which names its request only. */
  async exportJobById(requestId: string): Promise<(CohortExportJob & { appId: number }) | undefined> {
    await this.tables();
    const [row] = await this.sql.rows('SELECT * FROM cohort_exports WHERE request_id = ?', [requestId]);
    if (!row) return undefined;
    return {
      appId: Number(row.app_id),
      requestId,
      cohortId: row.cohort_id as string,
      propKeys: row.prop_keys === null ? null : (JSON.parse(row.prop_keys as string) as string[]),
      requestedAt: Number(row.requested_at),
      file: (row.file as string | null) ?? null,
    };
  }
}

async function insertMembers(tx: Omit<SqlSession, 'transaction'>, appId: number, cohortId: string, svcIds: readonly number[]): Promise<void> {
  if (svcIds.length === 0) return;
  await tx.run(
    `INSERT INTO cohort_members SELECT ?, ?, id FROM (SELECT DISTINCT unnest(?::BIGINT[]) AS id) WHERE id NOT IN (SELECT svc_id FROM cohort_members WHERE app_id = ? AND cohort_id = ?)`,
    [appId, cohortId, JSON.stringify(svcIds), appId, cohortId],
  );
}
