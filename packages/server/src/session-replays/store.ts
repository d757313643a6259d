// Session replays in the engine's own tables: one row per replay (its start and end, the
// index the listing pages through) and one per event file (a batch the SDK sent, kept as
// the JSON array of its events as recorded).
import { EntityTables } from '../store/entity-tables.js';
import type { SqlSession, SqlValue } from '../store/types.js';

export const REPLAY_TABLES = `
CREATE SEQUENCE IF NOT EXISTS replay_file_ids START 1;
CREATE TABLE IF NOT EXISTS replays (app_id INTEGER, device_id VARCHAR, session_id VARCHAR, start_ms BIGINT, end_ms BIGINT, PRIMARY KEY (app_id, device_id, session_id));
CREATE TABLE IF NOT EXISTS replay_files (id BIGINT PRIMARY KEY, app_id INTEGER, device_id VARCHAR, session_id VARCHAR, start_ms BIGINT, end_ms BIGINT, events VARCHAR);
`;

export interface ReplayKey {
  deviceId: string;
  sessionId: string;
}

export interface StoredReplay extends ReplayKey {
  startMs: number;
  endMs: number;
}

/** Where a page of replays ends: the listing goes on after it, in its order. */
export type ReplayPosition = Omit<StoredReplay, 'endMs'>;

export interface ReplayFilter {
  /** Only replays starting at or after / at or before (ms). */
  fromMs?: number;
  toMs?: number;
  /** Replays starting before this are past their retention. */
  keptSinceMs: number;
}

/** An event file of a replay; files are ordered by their first event, then as they arrived. */
export interface ReplayFilePosition {
  startMs: number;
  id: number;
}

const replayOf = (row: Record<string, unknown>): StoredReplay => ({
  deviceId: row.device_id as string,
  sessionId: row.session_id as string,
  startMs: Number(row.start_ms),
  endMs: Number(row.end_ms),
});

export class ReplayStore extends EntityTables {
  constructor(sql: SqlSession) {
    super(sql, REPLAY_TABLES);
  }

  /** Stores one event file (`events`: a JSON array) and widens its replay to cover it, in one transaction. */
  async addFile(appId: number, replay: StoredReplay, events: string): Promise<void> {
    await this.tables();
    const { deviceId, sessionId, startMs, endMs } = replay;
    await this.sql.transaction(async (tx) => {
      await tx.run("INSERT INTO replay_files VALUES (nextval('replay_file_ids'), ?, ?, ?, ?, ?, ?)", [appId, deviceId, sessionId, startMs, endMs, events]);
      await tx.run(
        `INSERT INTO replays VALUES (?, ?, ?, ?, ?) ON CONFLICT (app_id, device_id, session_id)
         DO UPDATE SET start_ms = least(replays.start_ms, excluded.start_ms), end_ms = greatest(replays.end_ms, excluded.end_ms)`,
        [appId, deviceId, sessionId, startMs, endMs],
      );
    });
  }

  /** Up to `limit` replays in order of their start (then device and session), after `after` if given. */
  async replays(appId: number, filter: ReplayFilter, descending: boolean, after: ReplayPosition | undefined, limit: number): Promise<StoredReplay[]> {
    await this.tables();
    const conditions: [string, SqlValue[]][] = [
      ['app_id = ?', [appId]],
      ['start_ms >= ?', [filter.keptSinceMs]],
    ];
    if (filter.fromMs !== undefined) conditions.push(['start_ms >= ?', [filter.fromMs]]);
    if (filter.toMs !== undefined) conditions.push(['start_ms <= ?', [filter.toMs]]);
    if (after) {
      const beyond = descending ? '<' : '>';
      conditions.push([
        `(start_ms ${beyond} ? OR (start_ms = ? AND (device_id ${beyond} ? OR (device_id = ? AND session_id ${beyond} ?))))`,
        [after.startMs, after.startMs, after.deviceId, after.deviceId, after.sessionId],
      ]);
    }
    const direction = descending ? 'DESC' : 'ASC';
    const rows = await this.sql.rows(
      `SELECT device_id, session_id, start_ms, end_ms FROM replays WHERE ${conditions.map(([sql]) => sql).join(' AND ')}
       ORDER BY start_ms ${direction}, device_id ${direction}, session_id ${direction} LIMIT ?`,
      [...conditions.flatMap(([, values]) => values), limit],
    );
    return rows.map(replayOf);
  }

  async replay(appId: number, key: ReplayKey, keptSinceMs: number): Promise<StoredReplay | undefined> {
    await this.tables();
    const [row] = await this.sql.rows('SELECT device_id, session_id, start_ms, end_ms FROM replays WHERE app_id = ? AND device_id = ? AND session_id = ? AND start_ms >= ?', [
      appId,
      key.deviceId,
      key.sessionId,
      keptSinceMs,
    ]);
    return row && replayOf(row);
  }

  /** Up to `limit` files of a replay kept since `keptSinceMs`, in order, after `after` if given. */
  async files(appId: number, key: ReplayKey, keptSinceMs: number, after: ReplayFilePosition | undefined, limit: number): Promise<ReplayFilePosition[]> {
    await this.tables();
    const rows = await this.sql.rows(
      `SELECT f.id, f.start_ms FROM replay_files f JOIN replays r USING (app_id, device_id, session_id)
       WHERE f.app_id = ? AND f.device_id = ? AND f.session_id = ? AND r.start_ms >= ?${after ? ' AND (f.start_ms > ? OR (f.start_ms = ? AND f.id > ?))' : ''}
       ORDER BY f.start_ms, f.id LIMIT ?`,
      [appId, key.deviceId, key.sessionId, keptSinceMs, ...(after ? [after.startMs, after.startMs, after.id] : []), limit],
    );
    return rows.map((row) => ({ id: Number(row.id), startMs: Number(row.start_ms) }));
  }

  /** Removes every replay of the devices, with their files, in one transaction. */
  async forgetDevices(appId: number, deviceIds: string[]): Promise<void> {
    if (deviceIds.length === 0) return;
    await this.tables();
    const devices = deviceIds.map(() => '?').join(', ');
    await this.sql.transaction(async (tx) => {
      await tx.run(`DELETE FROM replay_files WHERE app_id = ? AND device_id IN (${devices})`, [appId, ...deviceIds]);
      await tx.run(`DELETE FROM replays WHERE app_id = ? AND device_id IN (${devices})`, [appId, ...deviceIds]);
    });
  }

  /** The events (JSON array) of a file whose replay is kept since `keptSinceMs`. */
  async fileEvents(id: number, keptSinceMs: number): Promise<string | undefined> {
    await this.tables();
    const [row] = await this.sql.rows('SELECT f.events FROM replay_files f JOIN replays r USING (app_id, device_id, session_id) WHERE f.id = ? AND r.start_ms >= ?', [id, keptSinceMs]);
    return row?.events as string | undefined;
  }
}
