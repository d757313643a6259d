// The reporting limits counted in PostgreSQL, shared by every server process on one database:
// the requests running per project (a slot row each) and the cost spent per project and second.
// An admission checks and takes under an advisory lock per project, so processes admitting at
// once take turns and never pass a limit together.
//
// A slot belongs to its process (a holder row), which renews the holder's lease every third of
// it while the process lives; slots of a holder whose lease ran out are not counted and are
// deleted with it. A fixed lifetime per slot (the 120 s request timeout) would free the slot
// of a request or cohort export that runs longer; a lease per holder frees a dead process's
// slots within the lease and costs one renewal per process, not per request.
import { randomUUID } from 'node:crypto';
import { EntityTables } from '../entity-tables.js';
import { type Admission, DOCUMENTED_LIMITS, FIVE_MINUTES, HOUR, type LimitFigures, refusal, type ReportingLimits } from '../../shared/reporting-limits.js';
import type { PostgresSession } from './sql-session.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS limit_holders (holder TEXT PRIMARY KEY, expires_at TIMESTAMPTZ NOT NULL);
CREATE TABLE IF NOT EXISTS reporting_slots (holder TEXT NOT NULL REFERENCES limit_holders ON DELETE CASCADE, slot BIGINT NOT NULL, app_id INTEGER NOT NULL, PRIMARY KEY (holder, slot));
CREATE INDEX IF NOT EXISTS reporting_slots_app ON reporting_slots (app_id);
CREATE TABLE IF NOT EXISTS reporting_costs (app_id INTEGER NOT NULL, second BIGINT NOT NULL, cost BIGINT NOT NULL, PRIMARY KEY (app_id, second));
`;

/** The advisory lock space of admissions (the key is the project); other users of the database leave it alone. */
const ADMISSION_LOCKS = 73052270;

/** A process that has not renewed its lease for this long is taken for dead. */
export const DEFAULT_LEASE_SECONDS = 30;

const RENEW_HOLDER = 'INSERT INTO limit_holders VALUES ($1, now() + make_interval(secs => $2)) ON CONFLICT (holder) DO UPDATE SET expires_at = EXCLUDED.expires_at';

export interface PostgresLimitOptions {
  figures?: LimitFigures;
  leaseSeconds?: number;
  /** Operator-facing messages (a failed renewal). */
  log?: (message: string) => void;
}

export class PostgresReportingLimits extends EntityTables implements ReportingLimits {
  private readonly holder = randomUUID();
  private readonly figures: LimitFigures;
  private readonly leaseSeconds: number;
  /** The slots this process holds; the renewal deletes its other slot rows (a release that failed). */
  private readonly held = new Set<number>();
  private lastSlot = 0;
  private readonly renewal: NodeJS.Timeout;

  constructor(
    private readonly session: PostgresSession,
    options: PostgresLimitOptions = {},
  ) {
    super(session, SCHEMA);
    this.figures = options.figures ?? DOCUMENTED_LIMITS;
    this.leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    const log = options.log ?? ((message: string) => console.error(message));
    this.renewal = setInterval(() => this.renew().catch((error: Error) => log(`renewing the reporting slots' lease failed: ${error.message}`)), (this.leaseSeconds * 1000) / 3);
    this.renewal.unref();
  }

  async admit(appId: number, cost: number, now: number): Promise<Admission> {
    await this.tables();
    const second = Math.floor(now / 1000);
    const slot = ++this.lastSlot;
    // Held before its row is written: a renewal meanwhile must not take the row for a leftover.
    this.held.add(slot);
    try {
      const refused = await this.session.inTurn(ADMISSION_LOCKS, appId, async (sql) => {
        const [inUse] = await sql.rows(
          `SELECT (SELECT count(*) FROM reporting_slots JOIN limit_holders USING (holder) WHERE app_id = $1 AND expires_at > now()) AS running,
             (SELECT coalesce(sum(cost), 0) FROM reporting_costs WHERE app_id = $1 AND second > $2) AS last_five_minutes,
             (SELECT coalesce(sum(cost), 0) FROM reporting_costs WHERE app_id = $1 AND second > $3) AS last_hour`,
          [appId, second - FIVE_MINUTES, second - HOUR],
        );
        const refused = refusal(this.figures, { running: Number(inUse!.running), lastFiveMinutes: Number(inUse!.last_five_minutes), lastHour: Number(inUse!.last_hour) }, cost);
        if (refused) return refused;
        // The holder's row may not exist yet (no renewal has run) or again (taken for dead).
        await sql.run(RENEW_HOLDER, [this.holder, this.leaseSeconds]);
        await sql.run('INSERT INTO reporting_slots VALUES ($1, $2, $3)', [this.holder, slot, appId]);
        if (cost > 0) {
          await sql.run('INSERT INTO reporting_costs VALUES ($1, $2, $3) ON CONFLICT (app_id, second) DO UPDATE SET cost = reporting_costs.cost + EXCLUDED.cost', [appId, second, cost]);
        }
        await sql.run('DELETE FROM reporting_costs WHERE app_id = $1 AND second <= $2', [appId, second - HOUR]);
        return undefined;
      });
      if (refused) {
        this.held.delete(slot);
        return refused;
      }
    } catch (error) {
      this.held.delete(slot);
      throw error;
    }
    return { release: () => this.release(slot) };
  }

  private release(slot: number): void {
    if (!this.held.delete(slot)) return;
    // Failed (PostgreSQL unreachable), the row is deleted by the next renewal.
    this.session.run('DELETE FROM reporting_slots WHERE holder = $1 AND slot = $2', [this.holder, slot]).catch(() => undefined);
  }

  /** Renews this process's lease, deletes its slot rows it no longer holds, and the holders (with their slots) whose lease ran out. */
  private async renew(): Promise<void> {
    await this.tables();
    await this.session.run(RENEW_HOLDER, [this.holder, this.leaseSeconds]);
    await this.session.run('DELETE FROM reporting_slots WHERE holder = $1 AND NOT (slot = ANY($2::bigint[]))', [this.holder, `{${[...this.held].join(',')}}`]);
    await this.session.run('DELETE FROM limit_holders WHERE expires_at <= now()');
  }

  /** Stops renewing and frees this process's slots at once (its requests have ended). */
  async close(): Promise<void> {
    clearInterval(this.renewal);
    // PostgreSQL unreachable: the slots are freed when the lease runs out instead.
    await this.tables()
      .then(() => this.session.run('DELETE FROM limit_holders WHERE holder = $1', [this.holder]))
      .catch(() => undefined);
  }
}
