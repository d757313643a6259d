// The RPC layer between the server's process and the storage engine's: errors, streams,
// transactions, a process that dies, its priority, its life bound to the parent's.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { openEngineProcess } from '../../../src/store/worker/engine-process.js';
import { inheritedNodeFlags, type Lowering, type MethodKinds, remote, startProcess } from '../../../src/store/worker/rpc.js';

interface Target {
  refuse(): Promise<void>;
  chunks(count: number): AsyncIterable<number[]>;
  production(): Promise<{ produced: number; finished: boolean }>;
  say(line: string): Promise<void>;
  pid(): Promise<number>;
  die(): Promise<void>;
}
const KINDS: MethodKinds<Target> = { refuse: 'call', chunks: 'stream', production: 'call', say: 'call', pid: 'call', die: 'call' };

const logged: string[] = [];
const started = async (nice: Lowering = 0) => {
  const child = await startProcess({ entry: new URL('../../support/rpc-child.ts', import.meta.url), data: undefined, nice }, (message) => logged.push(message));
  return { ...child, target: remote<Target>(child.client, 'target', KINDS) };
};

test("the child takes the parent's Node flags but those that run a script (a server started by `node -e` would start itself again in its engine process)", () => {
  expect(inheritedNodeFlags(['--max-old-space-size=4096', '-e', 'startServer()', '--import', 'tsx', '--eval=x', '-p', '1', '--enable-source-maps', '--input-type=module', '--input-type', 'module', '-i', '--test'])).toEqual([
    '--max-old-space-size=4096',
    '--import',
    'tsx',
    '--enable-source-maps',
  ]);
});

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

test("the child's log lines reach the parent's log, those written while it opens too", async () => {
  logged.length = 0;
  const { target, terminate } = await started();
  try {
    await target.say('a line of the child');
    expect(logged).toEqual(['opening', 'a line of the child']);
  } finally {
    await terminate();
  }
});

test('a process that dies fails the pending and the later calls, and is logged', async () => {
  const { target, terminate } = await started();
  try {
    await expect(target.die()).rejects.toThrow(/The process exited \(code 1\)/);
    await expect(target.production()).rejects.toThrow(/The process exited \(code 1\)/);
    expect(logged.join('\n')).toMatch(/the process exited \(code 1\): Error: the process died on purpose\n +at /);
  } finally {
    await terminate();
  }
});

/** Field `n` (1-based) of each thread's stat of process `pid`, after the command's parenthesis (field 2). */
const threadsField = (pid: number, n: number) =>
  readdirSync(`/proc/${pid}/task`).map((thread) => Number(readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8').split(') ')[1]!.split(' ')[n - 3]));
/** The niceness of each thread of process `pid`. */
const nicenessOfThreads = (pid: number) => threadsField(pid, 19);
const SCHED_IDLE = 5;

test.runIf(process.platform === 'linux')('every thread of the child runs `nice` lower than this process', async () => {
  const { target, terminate } = await started(5);
  try {
    const threads = nicenessOfThreads(await target.pid());
    expect(threads.length).toBeGreaterThan(1);
    expect(new Set(threads)).toEqual(new Set([Math.min(19, getPriority() + 5)]));
  } finally {
    await terminate();
  }
});

test.runIf(process.platform === 'linux')('idle: every thread of the child runs under SCHED_IDLE', async () => {
  const { target, terminate } = await started('idle');
  try {
    const policies = threadsField(await target.pid(), 41);
    expect(policies.length).toBeGreaterThan(1);
    expect(new Set(policies)).toEqual(new Set([SCHED_IDLE]));
  } finally {
    await terminate();
  }
});

// Under Linux's autogroup, a session of its own would share the CPUs equally with this process's,
// whatever its threads' niceness: the engine's threads took a CPU from the server's for 40 ms and more.
test.runIf(process.platform === 'linux')("the child is in this process's session; a Ctrl-C (SIGINT) leaves it to this process to end", async () => {
  const { target, terminate } = await started(5);
  try {
    const pid = await target.pid();
    expect(threadsField(pid, 6)[0]).toBe(threadsField(process.pid, 6)[0]);
    process.kill(pid, 'SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await target.pid()).toBe(pid);
  } finally {
    await terminate();
  }
});

const PARENT = fileURLToPath(new URL('../../support/rpc-parent.ts', import.meta.url));
/** Runs support/rpc-parent.ts in `mode`: its output's lines, its exit and its child's pid. */
const parent = async (mode: 'idle' | 'stay' | 'terminate') => {
  const running = spawn(process.execPath, [...process.execArgv, PARENT, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => running.once('close', resolve));
  const childPid = await new Promise<number>((resolve) =>
    running.stdout.on('data', (data: Buffer) => {
      output.push(...data.toString().split('\n').filter(Boolean));
      resolve(Number(output[0]));
    }),
  );
  return { running, output, exited, childPid };
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const gone = async (pid: number) => {
  const deadline = Date.now() + 10_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return !alive(pid);
};

test('an idle child does not keep its parent alive, and ends with it', async () => {
  const { exited, childPid } = await parent('idle');
  expect(await exited).toBe(0);
  expect(await gone(childPid)).toBe(true);
});

test('the parent waits for the child it ends', async () => {
  const { output, exited, childPid } = await parent('terminate');
  expect(await exited).toBe(0);
  expect(output).toEqual([String(childPid), 'terminated']);
  expect(alive(childPid)).toBe(false);
});

test('the child ends when its parent is killed', async () => {
  const { running, exited, childPid } = await parent('stay');
  running.kill('SIGKILL');
  await exited;
  expect(await gone(childPid)).toBe(true);
});

const dataDir = mkdtempSync(join(tmpdir(), 'svc-worker-rpc-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("a transaction holds the engine's session: a statement sent meanwhile runs after its commit", async () => {
  const opened = await openEngineProcess({ dataDir, engine: 'duckdb' }, 0, (message) => logged.push(message));
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
