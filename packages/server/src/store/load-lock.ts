// Loads into one engine database take turns per project: a project's load reads what the
// others stored of it (identities, insert ids, the project's place in the ingestion order) and
// writes its own on top, which is only right when no other load of that project runs in
// between. Loads of different projects run at once (docs/engines.md, "Loading that scales out").
import type { SqlSession } from './types.js';

/** What a holder excludes others from: the projects it changes, and the engine's setup when `setup`. */
export interface LockScope {
  appIds: readonly number[];
  /** Opening the engine (migrations, reading identities) and changes spanning projects (user mappings). */
  setup?: boolean;
}

export interface LoadLock {
  /** Runs `work` while no other holder of an overlapping scope runs. */
  hold<T>(scope: LockScope, work: () => Promise<T>): Promise<T>;
}

/** Turns within one process (a single server, or tests): every holder in turn, whatever its scope. */
export function inProcessLoadLock(): LoadLock {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    hold<T>(_scope: LockScope, work: () => Promise<T>): Promise<T> {
      const next = queue.then(work, work);
      queue = next.catch(() => undefined);
      return next;
    },
  };
}

/** The advisory lock key of the setup (any constant other users of the database leave alone). */
const SETUP_LOCK_KEY = 7305227002;
/** The first key of the two-key advisory locks of projects' loads (the second is the app id); admissions (reporting-limits.ts) use another. */
const PROJECT_LOCK_SPACE = 73052271;

/**
 * Turns across processes on one PostgreSQL database: transaction-scoped advisory locks, held
 * by one pooled connection for the duration of `work` and released when the transaction ends,
 * also when the process dies (the connection closes). Taken in one order (the setup, then
 * projects by id), so holders of overlapping scopes never wait on each other in a circle.
 */
export function postgresLoadLock(session: SqlSession): LoadLock {
  return {
    hold: <T>(scope: LockScope, work: () => Promise<T>): Promise<T> =>
      session.transaction(async (locked) => {
        if (scope.setup) await locked.rows(`SELECT pg_advisory_xact_lock(${SETUP_LOCK_KEY})`);
        for (const appId of [...new Set(scope.appIds)].sort((a, b) => a - b)) await locked.rows(`SELECT pg_advisory_xact_lock(${PROJECT_LOCK_SPACE}, ${Math.trunc(appId)})`);
        return work();
      }),
  };
}
