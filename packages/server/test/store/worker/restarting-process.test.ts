// A child process that dies is started again: the call pending at the death fails, later calls
// wait for the new process; starts that fail back off (doubling up to the most) and fail the
// calls that waited for them; closing stops the restarts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { RestartingProcess } from '../../../src/store/worker/restarting-process.js';
import { type MethodKinds, remote } from '../../../src/store/worker/rpc.js';

interface Target {
  pid(): Promise<number>;
  chunks(count: number): AsyncIterable<number[]>;
  die(): Promise<void>;
}
const KINDS: MethodKinds<Target> = { pid: 'call', chunks: 'stream', die: 'call' };
const ENTRY = new URL('../../support/rpc-child.ts', import.meta.url);

const dir = mkdtempSync(join(tmpdir(), 'svc-restarting-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function started(backoff: { firstMs: number; maxMs: number }) {
  const refuseWhile = join(dir, `refuse-${Math.random()}`);
  const logged: string[] = [];
  const child = await RestartingProcess.start({ entry: ENTRY, data: { refuseWhile }, nice: 0 }, (message) => logged.push(message), backoff);
  const refuseOpen = (refuse: boolean) => (refuse ? writeFileSync(refuseWhile, '') : rmSync(refuseWhile));
  return { child, target: remote<Target>(child, 'target', KINDS), logged, refuseOpen };
}

const waits = (logged: string[]) => logged.filter((message) => message.startsWith('starting a new process in'));

test('a process that dies is started again: the pending call fails, later calls wait for the new process', async () => {
  const { child, target, logged } = await started({ firstMs: 300, maxMs: 1000 });
  try {
    const first = await target.pid();
    await expect(target.die()).rejects.toThrow(/The process exited \(code 1\)/);
    const asked = Date.now();
    const second = await target.pid();
    expect(Date.now() - asked).toBeGreaterThanOrEqual(250);
    expect(second).not.toBe(first);
    let read = 0;
    for await (const chunk of target.chunks(3)) read += chunk.length;
    expect(read).toBe(6);
    expect(logged.join('\n')).toMatch(/the process exited \(code 1\): Error: the process died on purpose/);
    expect(waits(logged)).toEqual(['starting a new process in 300 ms']);
    expect(logged).toContain('the new process serves');
  } finally {
    await child.close(async () => undefined);
  }
});

test('starts that fail back off, doubling up to the most, fail the calls that waited; a process that served long waits little again', async () => {
  const { child, target, logged, refuseOpen } = await started({ firstMs: 50, maxMs: 200 });
  try {
    refuseOpen(true);
    await child.kill();
    expect(logged).toContain('the process was killed (SIGKILL)');
    await expect(target.pid()).rejects.toThrow(/The process died and a new one did not start: refused to open on purpose/);
    while (waits(logged).length < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(waits(logged)).toEqual([50, 100, 200, 200, 200].map((ms) => `starting a new process in ${ms} ms`));
    refuseOpen(false);
    while (!logged.includes('the new process serves')) await new Promise((resolve) => setTimeout(resolve, 20));
    const pid = await target.pid();
    // Served longer than the longest wait: the next death waits the shortest again.
    await new Promise((resolve) => setTimeout(resolve, 250));
    await child.kill();
    expect(await target.pid()).not.toBe(pid);
    expect(waits(logged).at(-1)).toBe('starting a new process in 50 ms');
  } finally {
    await child.close(async () => undefined);
  }
});

test('closing stops the restarts, and does not wait out the backoff', async () => {
  const { child, target, logged } = await started({ firstMs: 10_000, maxMs: 10_000 });
  await child.kill();
  const pending = target.pid();
  const closing = Date.now();
  await child.close(async () => undefined);
  expect(Date.now() - closing).toBeLessThan(1000);
  await expect(pending).rejects.toThrow(/closed/);
  expect(logged).not.toContain('the new process serves');
});
