// Uploaded cohorts and their export jobs in the entity tables (per project). Members stay
// with the engine (`CohortMembers`): the reporting dialect reads them for `userdata_cohort`
// segments and the deletion scrub empties them of deleted users. Members are written before
// the cohort's row, so a failure in between leaves no cohort without its members.
import { randomBytes } from 'node:crypto';
import { EntityTables } from '../store/entity-tables.js';
import type { CohortMembers, CohortMembershipChange, SqlSession, UserData } from '../store/types.js';

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
  constructor(
    sql: SqlSession,
    private readonly engine: CohortMembers & UserData,
  ) {
    super(sql, COHORT_TABLES);
  }

  async cohorts(appId: number): Promise<StoredCohort[]> {
    await this.tables();
    const rows = await this.sql.rows('SELECT * FROM cohorts WHERE app_id = ? ORDER BY created_at, id', [appId]);
    const sizes = await this.engine.cohortSizes(appId);
    return rows.map((r) => ({
      id: r.id as string,
      name: r.name as string,
      owner: r.owner as string,
      published: r.published as boolean,
      createdAt: Number(r.created_at),
      lastMod: Number(r.last_mod),
      size: sizes.get(r.id as string) ?? 0,
    }));
  }

  async cohort(appId: number, id: string): Promise<StoredCohort | undefined> {
    return (await this.cohorts(appId)).find((c) => c.id === id);
  }

  /** Creates a cohort, or replaces the members of `existingId`; its id. */
  async save(appId: number, cohort: { name: string; owner: string; published: boolean; existingId?: string }, svcIds: readonly number[], now: number): Promise<string> {
    await this.tables();
    const id = cohort.existingId ?? newId();
    await this.engine.replaceCohortMembers(appId, id, svcIds);
    if (cohort.existingId) {
      await this.sql.run('UPDATE cohorts SET name = ?, owner = ?, published = ?, last_mod = ? WHERE app_id = ? AND id = ?', [cohort.name, cohort.owner, cohort.published, now, appId, id]);
    } else {
      await this.sql.run('INSERT INTO cohorts VALUES (?, ?, ?, ?, ?, ?, ?)', [id, appId, cohort.name, cohort.owner, cohort.published, now, now]);
    }
    return id;
  }

  /** Applies additions and removals in order (all or none). */
  async changeMembers(appId: number, cohortId: string, changes: readonly CohortMembershipChange[], now: number): Promise<void> {
    await this.tables();
    await this.engine.changeCohortMembers(appId, cohortId, changes);
    await this.sql.run('UPDATE cohorts SET last_mod = ? WHERE app_id = ? AND id = ?', [now, appId, cohortId]);
  }

  members(appId: number, cohortId: string): Promise<number[]> {
    return this.engine.cohortMembers(appId, cohortId);
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
    for (const [svcId, properties] of await this.engine.profileProperties(appId, svcIds)) {
      const values = result.get(svcId)!;
      for (const [name, value] of Object.entries(properties)) {
        if (value !== null && value !== undefined) values.set(`gp:${name}`, typeof value === 'string' ? value : JSON.stringify(value));
      }
    }
    for (const [svcId, latest] of await this.engine.latestEventValues(appId, svcIds, builtIns)) {
      const values = result.get(svcId)!;
      for (const [name, value] of latest) if (value !== null && value !== undefined) values.set(name, String(value));
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
