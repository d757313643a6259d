// Segment loads of every server process sharing one engine database take turns: a load reads
// what the others stored (identities, the ingestion order, insert ids) and writes its own on
// top, which is only right when no other load runs in between.
import type { SqlSession } from './types.js';

export interface LoadLock {
  /** Runs `work` while no other holder of the same lock runs. */
  hold<T>(work: () => Promise<T>): Promise<T>;
}

/** Turns within one process: a single server (DuckDB, or tests). */
export function inProcessLoadLock(): LoadLock {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    hold<T>(work: () => Promise<T>): Promise<T> {
      const next = queue.then(work, work);
      queue = next.catch(() => undefined);
      return next;
    },
  };
}

/** The advisory lock key of segment loads (any constant other users of the database leave alone). */
const LOAD_LOCK_KEY = 7305227002;

/**
 * Turns across processes on one PostgreSQL database: a transaction-scoped advisory lock, held
 * by one pooled connection for the duration of `work` and released when the transaction ends,
 * also when the process dies (the connection closes).
 */
export function postgresLoadLock(session: SqlSession): LoadLock {
  return {
    hold: <T>(work: () => Promise<T>): Promise<T> =>
      session.transaction(async (locked) => {
        await locked.rows(`SELECT pg_advisory_xact_lock(${LOAD_LOCK_KEY})`);
        return work();
      }),
  };
}
