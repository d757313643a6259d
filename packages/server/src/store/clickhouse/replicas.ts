// The replicas of one ClickHouse shard as the engine sees them: a client per replica's HTTP
// URL and one replica in use at a time. When the replica in use does not answer, the next one
// takes over: a read is sent again there (nothing of its answer reached the caller yet); a
// write is sent again only when it never reached the replica (connection refused), since one
// cut mid-way may have been applied. Such a failed write fails its caller as before (a load, a
// scrub, a cohort change), which runs again later on the replica now in use; the replicas bring
// each other up to date through ZooKeeper once the failed one is back.
//
// Before a load reads what other processes loaded (identities, insert ids), the replica in use
// fetches what every replica holds: another process may have loaded through another replica an
// instant ago.
//
// A replica taken into use must not miss rows: one back from a crash may not have fetched yet
// the parts the others wrote meanwhile, and if those are down it cannot. Until its queue holds
// no part to fetch, it is not used (its calls fail as storage unavailable: 503, sent again later),
// rather than answer without rows or check insert_ids against a part of them.
import type { ClickHouseClient } from '@clickhouse/client';
import { causedBy, isUnavailable } from '../../shared/unavailable.js';

/** Whether the request never reached the server: refused at connect. */
const neverSent = (failure: unknown) => causedBy(failure, (error) => error.code === 'ECONNREFUSED');

/** A replica with parts to fetch: as if it did not answer. */
class ReplicaBehind extends Error {
  readonly code = 'SVC_REPLICA_BEHIND';
}

/**
 * Its tables with parts to fetch, or with entries of the shared log not read yet (one back
 * while the others are down reads none: its log pointer stays below the log's last index; both
 * are 0 for a table whose log is empty).
 */
export const TABLE_BEHIND = '(inserts_in_queue > 0 OR (log_pointer <= log_max_index AND log_pointer + log_max_index > 0))';

async function tablesBehind(client: ClickHouseClient): Promise<number> {
  const query = `SELECT sum(${TABLE_BEHIND}) AS behind FROM system.replicas WHERE database = currentDatabase()`;
  const [row] = await (await client.query({ query, format: 'JSONEachRow' })).json<{ behind: number | string }>();
  return Number(row?.behind ?? 0);
}

export class Replicas {
  private inUse = 0;
  /** Whether the replica in use was found holding every part (replicated tables only). */
  private complete: boolean;

  constructor(
    private readonly clients: readonly ClickHouseClient[],
    private readonly urls: readonly string[],
    private readonly replicated: boolean,
    private readonly log: (message: string) => void = () => {},
  ) {
    if (clients.length === 0) throw new Error('No ClickHouse URL');
    this.complete = !replicated;
  }

  /** Runs a read on the replica in use; where it does not answer, on the next ones in turn. */
  read<T>(call: (client: ClickHouseClient) => Promise<T>): Promise<T> {
    return this.attempt(call, isUnavailable);
  }

  /**
   * Runs a write on the replica in use; on the next ones while it was refused unsent, unless
   * `once` (its rows come from a stream the first try may have started reading).
   */
  write<T>(call: (client: ClickHouseClient) => Promise<T>, once = false): Promise<T> {
    return this.attempt(call, once ? () => false : neverSent);
  }

  /** The replicas that answer `SELECT 1` now. */
  async answering(): Promise<ClickHouseClient[]> {
    const answers = await Promise.all(this.clients.map((client) => client.ping().then((result) => result.success, () => false)));
    return this.clients.filter((_, i) => answers[i]);
  }

  /**
   * Waits until the replica in use (`everyReplica`: each replica that answers) has fetched what
   * the replicas wrote before now (replicated tables only), as `SYSTEM SYNC REPLICA` does (it
   * reads the shared log itself, where `system.replicas` may show the log read before its parts
   * are queued); it also waits for merges queued meanwhile. A replica that cannot within
   * `timeLimitMs` (what it lacks is on replicas that do not answer) fails as unavailable.
   */
  async fetchOthers(timeLimitMs: number, everyReplica = false): Promise<void> {
    if (!this.replicated) return;
    const sync = async (client: ClickHouseClient) => {
      const tables = await (await client.query({ query: 'SELECT table FROM system.replicas WHERE database = currentDatabase()', format: 'JSONEachRow' })).json<{ table: string }>();
      const signal = AbortSignal.timeout(timeLimitMs);
      try {
        for (const { table } of tables) await client.command({ query: `SYSTEM SYNC REPLICA \`${table}\``, abort_signal: signal });
      } catch (error) {
        if (!signal.aborted) throw error;
        throw new ReplicaBehind(`ClickHouse replica ${this.urls[this.clients.indexOf(client)]} did not fetch within ${timeLimitMs / 1000} s what the other replicas wrote`);
      }
    };
    if (!everyReplica) return this.read(sync);
    for (const client of await this.answering()) await sync(client);
  }

  private async checkComplete(replica: number): Promise<void> {
    const behind = await tablesBehind(this.clients[replica]!);
    if (behind > 0) {
      throw new ReplicaBehind(`ClickHouse replica ${this.urls[replica]} has not fetched yet what the other replicas wrote (${behind} tables behind)`);
    }
    if (this.inUse === replica) this.complete = true;
  }

  close(): Promise<unknown> {
    return Promise.all(this.clients.map((client) => client.close()));
  }

  private async attempt<T>(call: (client: ClickHouseClient) => Promise<T>, sendAgain: (failure: unknown) => boolean): Promise<T> {
    for (let tried = 1; ; tried++) {
      const replica = this.inUse;
      try {
        if (!this.complete) await this.checkComplete(replica);
        return await call(this.clients[replica]!);
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        // Another call may have moved on already; move on once per failed replica.
        if (this.inUse === replica && this.clients.length > 1) {
          this.inUse = (replica + 1) % this.clients.length;
          this.complete = !this.replicated;
          this.log(`ClickHouse replica ${this.urls[replica]} is not used: ${error instanceof Error ? error.message : String(error)}; trying ${this.urls[this.inUse]}`);
        }
        if (tried >= this.clients.length || !(error instanceof ReplicaBehind || sendAgain(error))) throw error;
      }
    }
  }
}
