// SQL text and statements of the ClickHouse engine: literals, inserts of JSON rows, and
// mutations waited for (18.16 runs them in the background, without `mutations_sync`).
import type { ClickHouseEvents } from './events.js';

type Row = Record<string, unknown>;

/** A ClickHouse string literal. */
export const literal = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
export const integers = (values: Iterable<number>) => [...values].map((value) => String(Math.trunc(value))).join(', ');
export const quoted = (column: string) => `\`${column.replace(/`/g, '')}\``;

/** Inserts the rows (none: no statement) in one INSERT. */
export function insertRows(store: ClickHouseEvents, table: string, values: Row[]): Promise<unknown> {
  if (values.length === 0) return Promise.resolve();
  return store.client.insert({ table, values, format: 'JSONEachRow' });
}

/**
 * Mutations are polled until done. A mutation that fails is retried by the server forever and
 * blocks the later ones of its table (18.16 can neither report nor kill it), so their SQL must be right.
 */
const MUTATION_POLL_MS = 20;

/** Runs a mutation and waits until every part has it applied. */
export async function mutate(store: ClickHouseEvents, table: string, mutation: string): Promise<void> {
  await store.client.command({ query: `ALTER TABLE ${table} ${mutation}` });
  for (;;) {
    const [pending] = await store.query(`SELECT count() AS n FROM system.mutations WHERE database = currentDatabase() AND table = ${literal(table)} AND is_done = 0`);
    if (Number(pending!.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, MUTATION_POLL_MS));
  }
}
