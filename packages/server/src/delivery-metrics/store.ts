// Event streaming in the entity tables: per destination a cursor over the events' ingestion
// order (`ingest_seq`, read from the engine's `StreamedEvents`), the batches cut from it
// (with their events' seqs) and every delivery attempt. A batch and the cursor move in one
// transaction, so an acknowledged event is in a batch or still ahead of the cursor, across
// restarts; the cursor only moves from where the events were read (another process sharing
// the tables may have moved it meanwhile: then nothing is cut).
import { EntityTables } from '../store/entity-tables.js';
import type { SqlSession, StreamedEvents } from '../store/types.js';
import { inBatches, type Outcome } from './delivery.js';
import type { SettledEvents, Window } from './metrics.js';

export const STREAMING_TABLES = `
CREATE SEQUENCE IF NOT EXISTS stream_batch_ids START 1;
CREATE TABLE IF NOT EXISTS stream_cursors (sync_id VARCHAR PRIMARY KEY, last_seq BIGINT);
CREATE TABLE IF NOT EXISTS stream_batches (batch_id BIGINT PRIMARY KEY, sync_id VARCHAR, expires_at BIGINT, attempts INTEGER, next_attempt_at BIGINT, state VARCHAR);
CREATE TABLE IF NOT EXISTS stream_batch_events (batch_id BIGINT, ingest_seq BIGINT, accepted_at BIGINT);
CREATE TABLE IF NOT EXISTS stream_attempts (batch_id BIGINT, sync_id VARCHAR, attempt INTEGER, attempted_at BIGINT, answered_at BIGINT, events INTEGER, outcome VARCHAR, status INTEGER, error VARCHAR);
`;

/** What a destination streams: the project's events of these types (all when absent) accepted from `since`. */
export interface StreamSelection {
  syncId: string;
  appId: number;
  eventTypes?: string[];
  since: number;
}

export interface PendingBatch {
  batchId: number;
  attempts: number;
  expiresAt: number;
}

export interface AttemptRecord {
  batchId: number;
  syncId: string;
  attempt: number;
  attemptedAt: number;
  answeredAt: number;
  events: number;
  outcome: Outcome;
  status: number | null;
  error: string | null;
  nextAttemptAt: number | null;
}

export class StreamStore extends EntityTables {
  constructor(
    sql: SqlSession,
    private readonly events: StreamedEvents,
  ) {
    super(sql, STREAMING_TABLES);
  }

  /**
   * Cuts the destination's next events (at most `maxEvents`) into batches of `batchSize`
   * and moves its cursor past them, or past every loaded event when fewer are left.
   */
  async cutBatches(selection: StreamSelection, batchSize: number, maxEvents: number, expiryMs: number): Promise<number> {
    await this.tables();
    const [cursor] = await this.sql.rows('SELECT last_seq FROM stream_cursors WHERE sync_id = ?', [selection.syncId]);
    const after = (cursor?.last_seq as number | undefined) ?? 0;
    const { appId, since, eventTypes } = selection;
    const last = await this.events.loadedIngestSeq(appId);
    const events = await this.events.streamedEvents({ appId, afterSeq: after, untilSeq: last, since, eventTypes, limit: maxEvents });
    const reached = events.length === maxEvents ? events.at(-1)!.ingestSeq : last;
    return this.sql.transaction(async (tx) => {
      const moved = await tx.rows(
        'INSERT INTO stream_cursors VALUES (?, ?) ON CONFLICT (sync_id) DO UPDATE SET last_seq = excluded.last_seq WHERE stream_cursors.last_seq = ? RETURNING sync_id',
        [selection.syncId, reached, after],
      );
      if (moved.length === 0) return 0;
      for (const batch of inBatches(events, batchSize)) {
        const firstAccepted = Math.min(...batch.map((e) => e.serverUploadTime));
        const [created] = await tx.rows("INSERT INTO stream_batches VALUES (nextval('stream_batch_ids'), ?, ?, 0, 0, 'pending') RETURNING batch_id", [selection.syncId, firstAccepted + expiryMs]);
        const values = batch.map(() => '(?, ?, ?)').join(', ');
        await tx.run(`INSERT INTO stream_batch_events VALUES ${values}`, batch.flatMap((e) => [created!.batch_id as number, e.ingestSeq, e.serverUploadTime]));
      }
      return events.length;
    });
  }

  /** The destination's batches due for an attempt at `now`, oldest first. */
  async dueBatches(syncId: string, now: number): Promise<PendingBatch[]> {
    await this.tables();
    const rows = await this.sql.rows("SELECT batch_id, attempts, expires_at FROM stream_batches WHERE sync_id = ? AND state = 'pending' AND next_attempt_at <= ? ORDER BY batch_id", [syncId, now]);
    return rows.map((r) => ({ batchId: r.batch_id as number, attempts: r.attempts as number, expiresAt: r.expires_at as number }));
  }

  /** The batch's events as stored (JSON objects with `svc_id`), in ingestion order; scrubbed events are gone. */
  async batchEvents(batchId: number): Promise<Record<string, unknown>[]> {
    await this.tables();
    const rows = await this.sql.rows('SELECT ingest_seq FROM stream_batch_events WHERE batch_id = ?', [batchId]);
    return this.events.eventsBySeq(rows.map((r) => r.ingest_seq as number));
  }

  /** Records an attempt and the batch's new state in one transaction. */
  async recordAttempt(record: AttemptRecord): Promise<void> {
    await this.tables();
    await this.sql.transaction(async (tx) => {
      await tx.run('INSERT INTO stream_attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
        record.batchId,
        record.syncId,
        record.attempt,
        record.attemptedAt,
        record.answeredAt,
        record.events,
        record.outcome,
        record.status,
        record.error,
      ]);
      await tx.run('UPDATE stream_batches SET attempts = ?, next_attempt_at = ?, state = ? WHERE batch_id = ?', [
        record.attempt,
        record.nextAttemptAt ?? record.answeredAt,
        record.outcome === 'retry' ? 'pending' : record.outcome,
        record.batchId,
      ]);
    });
  }

  /** Events whose delivery was settled (answer received) in the window, and the delivered ones' p95 latency. */
  async settled(syncId: string, window: Window): Promise<SettledEvents> {
    await this.tables();
    const range = [syncId, window.start, window.end];
    const counts = await this.sql.rows(
      `SELECT outcome, attempt = 1 AS first, sum(events) AS events FROM stream_attempts
        WHERE sync_id = ? AND answered_at >= ? AND answered_at < ? AND outcome <> 'retry' GROUP BY 1, 2`,
      range,
    );
    const count = (outcome: Outcome, first?: boolean) => counts.filter((r) => r.outcome === outcome && (first === undefined || r.first === first)).reduce((sum, r) => sum + Number(r.events), 0);
    const [latency] = await this.sql.rows(
      `SELECT percentile_disc(0.95) WITHIN GROUP (ORDER BY a.answered_at - e.accepted_at) AS p95 FROM stream_attempts a JOIN stream_batch_events e ON e.batch_id = a.batch_id
        WHERE a.sync_id = ? AND a.answered_at >= ? AND a.answered_at < ? AND a.outcome = 'delivered'`,
      range,
    );
    return {
      deliveredFirstAttempt: count('delivered', true),
      deliveredAfterRetry: count('delivered', false),
      expired: count('expired'),
      discarded: count('discarded'),
      p95LatencyMs: (latency?.p95 as number | null | undefined) ?? null,
    };
  }
}
