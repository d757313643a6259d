// `svc-server admin mutations`: the ClickHouse mutations not done yet, for an operator whose
// loads, scrubs or cohort changes fail waiting for one (a mutation that fails is retried by
// 18.16 forever and blocks the later ones of its table; it can be neither reported nor killed
// there). Read with a plain client: listing changes nothing in the database.
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { describeMutation, pendingMutations } from './statements.js';

/** Prints the pending mutations of `database` at `url`, and what to do about a stuck one; how many there are. */
export async function reportPendingMutations(url: string, database = 'default', print: (line: string) => void = console.log): Promise<number> {
  const client = createClient({ url, database, log: { level: ClickHouseLogLevel.OFF } });
  try {
    const store = { query: async (sql: string) => (await client.query({ query: sql, format: 'JSONEachRow' })).json<Record<string, unknown>>() };
    const pending = await pendingMutations(store);
    if (pending.length === 0) {
      print(`no pending mutations in ${database}`);
      return 0;
    }
    for (const mutation of pending) print(`${mutation.table}: ${describeMutation(mutation)}`);
    print(
      `${pending.length} pending. One that stays (its parts to do do not fall) blocks the later ones of its table: on 18.16 stop ClickHouse, remove its file mutation_<id>.txt from the table's data directory and start it again (19.x and later: KILL MUTATION); the server's waits then succeed and the failed loads, scrubs or cohort changes run again (docs/engines.md).`,
    );
    return pending.length;
  } finally {
    await client.close();
  }
}
