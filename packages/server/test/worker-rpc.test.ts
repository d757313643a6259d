// The RPC layer between the server's thread and the storage engine's: errors, streams,
// transactions, a worker that dies.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { openEngineThread } from '../src/store/worker/engine-thread.js';
import { type MethodKinds, remote, startWorker } from '../src/store/worker/rpc.js';

interface Target {
  refuse(): Promise<void>;
  chunks(count: number): AsyncIterable<number[]>;
  production(): Promise<{ produced: number; finished: boolean }>;
  die(): Promise<void>;
}
const KINDS: MethodKinds<Target> = { refuse: 'call', chunks: 'stream', production: 'call', die: 'call' };

const logged: string[] = [];
const started = async () => {
  const worker = await startWorker(new URL('./support/rpc-worker.ts', import.meta.url), undefined, (message) => logged.push(message));
  return { ...worker, target: remote<Target>(worker.client, 'target', KINDS) };
};

test('an error crosses with its name, message and fields', async () => {
  const { target, terminate } = await started();
  try {
    const error = await target.refuse().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'Refusal', message: 'Code: 395. refused on purpose', code: 395 });
  } finally {
    await terminate();
  }
});

test('a stream is produced as it is consumed, and a consumer that stops stops the producer', async () => {
  const { target, terminate } = await started();
  try {
    const chunks = target.chunks(1000);
    expect(await target.production()).toEqual({ produced: 0, finished: false });
    const read: number[][] = [];
    for await (const chunk of chunks) {
      read.push(chunk);
      if (read.length === 3) break;
    }
    expect(read).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
    ]);
    expect(await target.production()).toEqual({ produced: 3, finished: true });
    let all = 0;
    for await (const chunk of target.chunks(5)) all += chunk.length;
    expect(all).toBe(10);
  } finally {
    await terminate();
  }
});

test('a worker that dies fails the pending and the later calls, and is logged', async () => {
  const { target, terminate } = await started();
  try {
    await expect(target.die()).rejects.toThrow(/The worker thread failed: the worker died on purpose/);
    await expect(target.production()).rejects.toThrow(/The worker thread failed/);
    expect(logged.some((message) => message.includes('the worker died on purpose'))).toBe(true);
  } finally {
    await terminate();
  }
});

const dataDir = mkdtempSync(join(tmpdir(), 'svc-worker-rpc-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("a transaction holds the engine's session: a statement sent meanwhile runs after its commit", async () => {
  const opened = await openEngineThread({ dataDir, engine: 'duckdb' }, (message) => logged.push(message));
  const { sql } = opened.engine;
  try {
    await sql.run('CREATE TABLE steps (seq INTEGER, step VARCHAR)');
    await sql.run('CREATE SEQUENCE step_seq');
    const insert = "INSERT INTO steps VALUES (nextval('step_seq'), ?)";
    let outside: Promise<void> | undefined;
    const answer = await sql.transaction(async (tx) => {
      await tx.run(insert, ['first in the transaction']);
      outside = sql.run(insert, ['outside']);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await tx.run(insert, ['second in the transaction']);
      return (await tx.rows('SELECT count(*) AS n FROM steps'))[0]!.n;
    });
    await outside;
    expect(answer).toBe(2);
    expect((await sql.rows('SELECT step FROM steps ORDER BY seq')).map((row) => row.step)).toEqual(['first in the transaction', 'second in the transaction', 'outside']);
    // A callback that throws rolls the transaction back, with its own error.
    await expect(
      sql.transaction(async (tx) => {
        await tx.run(insert, ['rolled back']);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await sql.rows("SELECT count(*) AS n FROM steps WHERE step = 'rolled back'")).toEqual([{ n: 0 }]);
    await expect(opened.engine.query('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
  } finally {
    await opened.engine.close();
  }
});
