// Waiting for a mutation has a time limit: a mutation that fails is retried by ClickHouse
// 18.16 forever and blocks the later ones of its table, so the statement that needed one
// fails after the limit, naming the mutations still pending, instead of hanging.
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { main } from '../../../src/cli.js';
import { type ClickHouseServer, startClickHouse } from '../../../../../scripts/clickhouse/start.mjs';
import { ClickHouseEvents } from '../../../src/store/clickhouse/events.js';
import { reportPendingMutations } from '../../../src/store/clickhouse/mutation-report.js';
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
  await store.command(`CREATE TABLE ${name} (id Int64, value Int64) ENGINE = MergeTree() ORDER BY id`);
  await store.write((client) => client.insert({ table: name, values: [{ id: 1, value: 1 }, { id: 2, value: 2 }], format: 'JSONEachRow' }));
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
  // The operator's command lists both, and what to do.
  const printed: string[] = [];
  expect(await reportPendingMutations(clickhouse.url, 'mutations', (line) => printed.push(line))).toBe(2);
  expect(printed[0]).toMatch(/^blocked: mutation_\d+\.txt \(created .*, \d+ parts to do\): UPDATE value = throwIf/);
  expect(printed[1]).toMatch(/^blocked: mutation_\d+\.txt .*DELETE WHERE/);
  expect(printed[2]).toMatch(/^2 pending\. .*remove its file mutation_<id>\.txt/);
  await store.command('DROP TABLE blocked');
  expect(await reportPendingMutations(clickhouse.url, 'mutations', (line) => printed.push(line))).toBe(0);
  expect(printed.at(-1)).toBe('no pending mutations in mutations');
  // The command: `svc-server admin mutations`.
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await main(['admin', 'mutations', '--clickhouse-url', clickhouse.url, '--clickhouse-database', 'mutations']);
    expect(log).toHaveBeenCalledWith('no pending mutations in mutations');
  } finally {
    log.mockRestore();
  }
  await expect(main(['admin', 'mutations'])).rejects.toThrow(/admin mutations needs --clickhouse-url/);
}, 60_000);
