// The rows reporting reads next to the events (tables.ts, migration 3) as the ClickHouse engine
// writes them: cohort memberships and the mirror of the shared store's user mappings, each row
// versioned by the engine's clock (the latest version of a key is its state).
import type { ClickHouseEvents } from './events.js';
import { insertRows, mutate } from './statements.js';
import { integers, literal } from './sql-text.js';
import { currentCohortMembers } from './tables.js';

/** A user mapping as mirrored: project, from `svc_id`, to `svc_id` (null: unmapped), anything after. */
type MirroredMapping = readonly [appId: number, from: number, to: number | null, ...unknown[]];

export class ReportingRows {
  /** The last version given to a cohort membership or user mapping row. */
  private lastVersion = 0;

  constructor(
    private readonly store: ClickHouseEvents,
    private readonly mutationTimeLimitMs: number,
  ) {}

  /**
   * Versions of cohort membership and user mapping rows: microseconds of the clock, raised
   * above the last one given (one process writes them; see tables.ts).
   */
  private nextVersion(): number {
    this.lastVersion = Math.max(Date.now() * 1000, this.lastVersion + 1);
    return this.lastVersion;
  }

  /** The mappings as reporting reads them (the shared store keeps the user ids): written after the shared store's. */
  async mirrorUserMappings(rows: readonly MirroredMapping[]): Promise<void> {
    const version = this.nextVersion();
    await insertRows(this.store, 'user_mappings', rows.map(([appId, from, to]) => ({ app_id: appId, from_svc: from, to_svc: to, version })));
  }

  /**
   * The mirror takes the shared store's mappings (`sharedMappings`) where they differ: a
   * process that ended between the two writes of a mapping (or of a scrub) left the mirror behind.
   */
  async reconcileUserMappings(sharedMappings: readonly [appId: number, from: number, to: number][]): Promise<void> {
    const shared = new Map<string, number>();
    for (const [appId, from, to] of sharedMappings) shared.set(`${appId}:${from}`, to);
    const mirrored = await this.store.query('SELECT app_id, from_svc, tupleElement(argMax(tuple(to_svc), version), 1) AS to_svc FROM user_mappings GROUP BY app_id, from_svc');
    const stale: [number, number, number | null][] = [];
    for (const row of mirrored) {
      const key = `${row.app_id}:${row.from_svc}`;
      const to = row.to_svc === null ? null : Number(row.to_svc);
      if ((shared.get(key) ?? null) !== to) stale.push([Number(row.app_id), Number(row.from_svc), shared.get(key) ?? null]);
      shared.delete(key);
    }
    for (const [key, to] of shared) {
      const [appId, from] = key.split(':').map(Number) as [number, number];
      stale.push([appId, from, to]);
    }
    if (stale.length > 0) await this.mirrorUserMappings(stale);
  }

  /** The deleted users leave their cohorts and mappings (both directions). */
  async scrub(appId: number, svcIds: number[]): Promise<void> {
    const project = `app_id = ${Math.trunc(appId)}`;
    const list = integers(svcIds);
    await mutate(this.store, 'cohort_members', `DELETE WHERE ${project} AND svc_id IN (${list})`, this.mutationTimeLimitMs);
    await mutate(this.store, 'user_mappings', `DELETE WHERE ${project} AND (from_svc IN (${list}) OR to_svc IN (${list}))`, this.mutationTimeLimitMs);
  }

  /** One INSERT (one block, one part: all or nothing) of the rows that take the members from `before` to `after`. */
  async writeCohortMembers(appId: number, cohortId: string, before: Set<number>, after: Set<number>): Promise<void> {
    const version = this.nextVersion();
    const row = (svcId: number, member: number) => ({ app_id: appId, cohort_id: cohortId, svc_id: svcId, member, version });
    await insertRows(this.store, 'cohort_members', [...[...before].filter((id) => !after.has(id)).map((id) => row(id, 0)), ...[...after].filter((id) => !before.has(id)).map((id) => row(id, 1))]);
  }

  async cohortMembers(appId: number, cohortId: string): Promise<number[]> {
    return (await this.store.query(`${currentCohortMembers(appId, cohortId, literal)} ORDER BY svc_id`)).map((r) => Number(r.svc_id));
  }

  async cohortSizes(appId: number): Promise<Map<string, number>> {
    const rows = await this.store.query(
      `SELECT cohort_id, countIf(member = 1) AS n FROM (SELECT cohort_id, svc_id, argMax(member, version) AS member FROM cohort_members WHERE app_id = ${Math.trunc(appId)} GROUP BY cohort_id, svc_id) GROUP BY cohort_id HAVING n > 0`,
    );
    return new Map(rows.map((r) => [r.cohort_id as string, Number(r.n)]));
  }
}
