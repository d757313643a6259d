// Statements of the ClickHouse engine: inserts of JSON rows, and
// mutations waited for (18.16 runs them in the background, without `mutations_sync`).
import type { ClickHouseSettings } from '@clickhouse/client';
import type { ClickHouseEvents } from './events.js';
import { literal } from './sql-text.js';

type Row = Record<string, unknown>;

/** Inserts the rows (none: no statement) in one INSERT, with settings of its own. */
export function insertRows(store: ClickHouseEvents, table: string, values: Row[], settings?: ClickHouseSettings): Promise<unknown> {
  if (values.length === 0) return Promise.resolve();
  return store.write((client) => client.insert({ table, values, format: 'JSONEachRow', clickhouse_settings: settings }));
}

/**
 * Mutations are polled until done. A mutation that fails is retried by the server forever and
 * blocks the later ones of its table (18.16 can neither report nor kill it, docs/engines.md),
 * so their SQL must be right, and waiting for one has a time limit: the load, scrub or
 * cohort change that needed it fails with the mutations still pending named, is logged and
 * runs again later.
 */
const MUTATION_POLL_MS = 20;
/** How long a mutation is waited for by default (a 10-million-event table's delete takes seconds). */
export const MUTATION_TIME_LIMIT_MS = 600_000;

export interface PendingMutation {
  table: string;
  id: string;
  /** When it was made, as ClickHouse prints it (server time zone). */
  created: string;
  partsToDo: number;
  command: string;
}

/**
 * The mutations of the database (of `table` only, when given) not done yet, oldest first. Done
 * means every active part that existed before the mutation holds it (its data version is at
 * least the mutation's block number in its partition; '' stands for every partition), as
 * `system.parts` tells, whatever `system.mutations` says: on replicas 18.16 leaves a mutation
 * `is_done = 0` for good when an insert that drew a block number before it died unfinished,
 * though every part has it.
 */
export async function pendingMutations(store: { query(sql: string): Promise<Row[]> }, table?: string): Promise<PendingMutation[]> {
  const ofTable = table === undefined ? '' : ` AND table = ${literal(table)}`;
  const rows = await store.query(
    `SELECT table, mutation_id, command, toString(create_time) AS created, parts_to_do, block_numbers.partition_id AS partitions, block_numbers.number AS blocks
     FROM system.mutations WHERE database = currentDatabase() AND is_done = 0${ofTable} ORDER BY create_time, mutation_id`,
  );
  if (rows.length === 0) return [];
  const parts = await store.query(
    `SELECT table, partition_id, min_block_number, data_version FROM system.parts
     WHERE database = currentDatabase() AND active AND table IN (${[...new Set(rows.map((m) => literal(String(m.table))))].join(', ')})`,
  );
  const needs = (m: Row) => {
    const blocks = new Map((m.partitions as string[]).map((partition, i) => [partition, Number((m.blocks as unknown[])[i])]));
    return parts.some((part) => {
      const block = blocks.get(String(part.partition_id)) ?? blocks.get('');
      return part.table === m.table && block !== undefined && Number(part.min_block_number) < block && Number(part.data_version) < block;
    });
  };
  return rows.filter(needs).map((m) => ({ table: String(m.table), id: String(m.mutation_id), created: String(m.created), partsToDo: Number(m.parts_to_do), command: String(m.command) }));
}

/** A pending mutation in a line: id, creation time, parts to do, its command's start. */
export const describeMutation = (m: PendingMutation) => `${m.id} (created ${m.created}, ${m.partsToDo} parts to do): ${m.command.slice(0, 200)}`;

/**
 * Runs a mutation and waits until every part of the table has it (and the table's earlier ones)
 * applied, at most `timeLimitMs`; of a split table, on every shard (its part of the table there).
 */
export async function mutate(store: ClickHouseEvents, table: string, mutation: string, timeLimitMs = MUTATION_TIME_LIMIT_MS): Promise<void> {
  const targets = store.shardsOf(table);
  for (const { shard, table: name } of targets) await shard.command(`ALTER TABLE ${name} ${mutation}`);
  const deadline = performance.now() + timeLimitMs;
  for (const { shard, table: name } of targets) {
    for (;;) {
      const pending = await pendingMutations(shard, name);
      if (pending.length === 0) break;
      if (performance.now() >= deadline) {
        const listed = pending.map(describeMutation).join('; ');
        const where = targets.length > 1 ? ` on shard ${shard.index + 1}` : '';
        throw new Error(`ClickHouse mutations of table ${name}${where} not done after ${Math.round(timeLimitMs / 1000)} s: ${listed}. One that fails is retried by ClickHouse forever and blocks the later ones (docs/engines.md)`);
      }
      await new Promise((resolve) => setTimeout(resolve, MUTATION_POLL_MS));
    }
    await shard.written();
  }
}
