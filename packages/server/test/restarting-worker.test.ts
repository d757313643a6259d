// A worker thread that dies is started again: the call pending at the death fails, later calls
// wait for the new thread; starts that fail back off (doubling up to the most) and fail the
// calls that waited for them; closing stops the restarts.
import { expect, test } from 'vitest';
import { RestartingWorker } from '../src/store/worker/restarting-worker.js';
import { type MethodKinds, remote } from '../src/store/worker/rpc.js';

interface Target {
  thread(): Promise<number>;
  chunks(count: number): AsyncIterable<number[]>;
  die(): Promise<void>;
}
const KINDS: MethodKinds<Target> = { thread: 'call', chunks: 'stream', die: 'call' };
const ENTRY = new URL('./support/rpc-worker.ts', import.meta.url);

async function started(backoff: { firstMs: number; maxMs: number }) {
  const refuseOpen = new Int32Array(new SharedArrayBuffer(4));
  const logged: string[] = [];
  const worker = await RestartingWorker.start(ENTRY, { refuseOpen }, (message) => logged.push(message), backoff);
  return { worker, target: remote<Target>(worker, 'target', KINDS), logged, refuseOpen };
}

const waits = (logged: string[]) => logged.filter((message) => message.startsWith('starting a new thread in'));

test('a thread that dies is started again: the pending call fails, later calls wait for the new thread', async () => {
  const { worker, target, logged } = await started({ firstMs: 300, maxMs: 1000 });
  try {
    const first = await target.thread();
    await expect(target.die()).rejects.toThrow(/the worker died on purpose/);
    const asked = Date.now();
    const second = await target.thread();
    expect(Date.now() - asked).toBeGreaterThanOrEqual(250);
    expect(second).not.toBe(first);
    let read = 0;
    for await (const chunk of target.chunks(3)) read += chunk.length;
    expect(read).toBe(6);
    expect(logged.some((message) => message.includes('the worker died on purpose'))).toBe(true);
    expect(waits(logged)).toEqual(['starting a new thread in 300 ms']);
    expect(logged).toContain('the new thread serves');
  } finally {
    await worker.close(async () => undefined);
  }
});

test('starts that fail back off, doubling up to the most, fail the calls that waited; a thread that served long waits little again', async () => {
  const { worker, target, logged, refuseOpen } = await started({ firstMs: 50, maxMs: 200 });
  try {
    Atomics.store(refuseOpen, 0, 1);
    await worker.kill();
    await expect(target.thread()).rejects.toThrow(/The worker thread died and a new one did not start: refused to open on purpose/);
    while (waits(logged).length < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(waits(logged)).toEqual([50, 100, 200, 200, 200].map((ms) => `starting a new thread in ${ms} ms`));
    Atomics.store(refuseOpen, 0, 0);
    while (!logged.includes('the new thread serves')) await new Promise((resolve) => setTimeout(resolve, 20));
    const thread = await target.thread();
    // Served longer than the longest wait: the next death waits the shortest again.
    await new Promise((resolve) => setTimeout(resolve, 250));
    await worker.kill();
    expect(await target.thread()).not.toBe(thread);
    expect(waits(logged).at(-1)).toBe('starting a new thread in 50 ms');
  } finally {
    await worker.close(async () => undefined);
  }
});

test('closing stops the restarts, and does not wait out the backoff', async () => {
  const { worker, target, logged } = await started({ firstMs: 10_000, maxMs: 10_000 });
  await worker.kill();
  const pending = target.thread();
  const closing = Date.now();
  await worker.close(async () => undefined);
  expect(Date.now() - closing).toBeLessThan(1000);
  await expect(pending).rejects.toThrow(/closed/);
  expect(logged).not.toContain('the new thread serves');
});
