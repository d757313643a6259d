// Waiting for a mutation has a time limit: a mutation that fails is retried by ClickHouse
// 18.16 forever and blocks the later ones of its table, so the statement that needed one
// fails after the limit, naming the mutations still pending, instead of hanging.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ClickHouseServer, startClickHouse } from '../../../../../scripts/clickhouse/start.mjs';
import { ClickHouseEvents } from '../../../src/store/clickhouse/events.js';
import { mutate } from '../../../src/store/clickhouse/statements.js';

let clickhouse: ClickHouseServer;
let store: ClickHouseEvents;

beforeAll(async () => {
  clickhouse = await startClickHouse();
  store = await ClickHouseEvents.open({ url: clickhouse.url, database: 'mutations' });
}, 60_000);

afterAll(async () => {
  await store?.close();
  await clickhouse?.stop();
});

async function scratchTable(name: string): Promise<void> {
  await store.client.command({ query: `CREATE TABLE ${name} (id Int64, value Int64) ENGINE = MergeTree() ORDER BY id` });
  await store.client.insert({ table: name, values: [{ id: 1, value: 1 }, { id: 2, value: 2 }], format: 'JSONEachRow' });
}

test('a mutation that completes is waited for', async () => {
  await scratchTable('completes');
  await mutate(store, 'completes', 'DELETE WHERE id = 1', 30_000);
  expect(await store.query('SELECT id FROM completes')).toEqual([{ id: 2 }]);
});

test('a mutation that never completes fails after the time limit, naming it; later ones wait behind it', async () => {
  await scratchTable('blocked');
  const started = performance.now();
  await expect(mutate(store, 'blocked', 'UPDATE value = throwIf(id > 0) WHERE 1', 1_500)).rejects.toThrow(/mutations of table blocked not done after 2 s: .*throwIf/);
  expect(performance.now() - started).toBeLessThan(15_000);
  // The failing one blocks the next one of its table: that wait fails too, listing both.
  await expect(mutate(store, 'blocked', 'DELETE WHERE id = 2', 500)).rejects.toThrow(/throwIf.*; .*DELETE WHERE/s);
  await store.client.command({ query: 'DROP TABLE blocked' });
}, 60_000);
