// The storage engine's process dies (killed as the OOM killer kills it), idle or inside a
// statement: the server keeps acknowledging events into the journal, starts a new process,
// answers reads again and loads every acknowledged event.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { killEngineProcess } from '../../src/store/worker/engine-process.js';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';
import { isUnavailable } from '../../src/shared/unavailable.js';

let h: Harness;
const logged: string[] = [];
beforeAll(async () => {
  h = await startHarness(['ingest', 'app'], { log: (message) => logged.push(message) });
});
afterAll(() => h?.close());

const json = (value: unknown) => encodeURIComponent(JSON.stringify(value));
const ingest = (from: number, count: number) =>
  postJson(`${h.proxied.ingest}/batch`, {
    api_key: h.project.api_key,
    events: Array.from({ length: count }, (_, i) => ({ event_type: 'Restart', user_id: `user-${from + i}`, time: Date.UTC(2026, 10, 2, 10) + from + i, insert_id: `restart-${from + i}` })),
  });
/** The events of the day, through a reporting query. */
const counted = async () => {
  const auth = `Basic ${Buffer.from(`${h.project.api_key}:${h.project.secret_key}`).toString('base64')}`;
  const answer = await send(`${h.proxied.app}/api/2/events/segmentation?start=20261102&end=20261102&m=totals&e=${json({ event_type: 'Restart' })}`, { headers: { authorization: auth } });
  return { status: answer.status, events: answer.status === 200 ? (answer.body.data.series[0][0] as number) : undefined };
};
const eventually = async (events: number) => {
  const deadline = Date.now() + 20_000;
  while ((await counted()).events !== events && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return counted();
};

test('after its process dies the engine is opened again: reads are answered and every acknowledged event loads', async () => {
  expect((await ingest(0, 50)).status).toBe(200);
  expect(await eventually(50)).toEqual({ status: 200, events: 50 });

  await killEngineProcess(h.server.store.reader);
  expect((await ingest(50, 50)).status).toBe(200);
  // A read made while the new process starts waits for it.
  expect((await counted()).status).toBe(200);
  expect((await ingest(100, 50)).status).toBe(200);
  expect(await eventually(150)).toEqual({ status: 200, events: 150 });
  expect(logged).toContain('storage engine: the process was killed (SIGKILL)');
  expect(logged).toContain('storage engine: starting a new process in 1000 ms');
  expect(logged).toContain('storage engine: the new process serves');
});

/** A statement that runs for minutes (DuckDB) or seconds, sleeping (ClickHouse, which would run it on after its client died). */
const LONG_STATEMENT =
  process.env.SVC_TEST_ENGINE === 'clickhouse'
    ? 'SELECT sum(sleepEachRow(1)) AS slept FROM numbers(3) SETTINGS max_block_size = 1'
    : 'SELECT max(range * 2) AS most FROM range(100000000000)';

test('killed while a statement runs, only the engine process dies: the server answers again and every acknowledged event loads', async () => {
  let settled = false;
  const statement = h.server.store.reader.query(LONG_STATEMENT).finally(() => (settled = true));
  const failure = statement.then(
    () => 'answered',
    (error: Error) => `${error.message}${isUnavailable(error) ? ' (storage unavailable: 503)' : ''}`,
  );
  expect((await ingest(150, 50)).status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(settled).toBe(false);
  await killEngineProcess(h.server.store.reader);
  expect(await failure).toBe('The process was killed (SIGKILL) (storage unavailable: 503)');
  expect((await ingest(200, 50)).status).toBe(200);
  expect(await eventually(250)).toEqual({ status: 200, events: 250 });
  expect(logged.filter((message) => message === 'storage engine: the new process serves')).toHaveLength(2);
});
