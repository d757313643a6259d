// Runs the reference server the way a user does (`svc-server start` on a fresh data
// directory) on the engine FUZZ_ENGINE names: DuckDB (the default), or ClickHouse with
// PostgreSQL for the other entities, both private servers on loopback started by the
// project's scripts. The demo project's keys come from what the server prints. Its engine
// runs at the tests' priority (--engine-nice 0): on CI's 2 cores, busy with other tests, an
// idle engine waits.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startClickHouse } from '../../../scripts/clickhouse/start.mjs';
import { startPostgres } from '../../../scripts/postgres/start.mjs';
import type { Keys } from './requests.js';

export type Engine = 'duckdb' | 'clickhouse';

export interface RunningServer extends Keys {
  engine: Engine;
  url: string;
  child: ChildProcess;
  /** The error the server logged for its 5xx answer to `method url` (its answer's body says only "Internal server error"). */
  loggedError(method: string, url: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

/** `METHOD URL answered 5xx: message` (then the stack, indented), as the server logs a 5xx. */
const SERVER_ERROR = /^(\S+) (\S+) answered 5\d\d: (.*)$/;
const LOG_WAIT_MS = 500;

/** Keeps the errors the server logs for its 5xx answers, and forwards its other lines (the stacks of those are dropped). */
function watchLog(child: ChildProcess): RunningServer['loggedError'] {
  const errors = new Map<string, string>();
  let tail = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    const lines = (tail + chunk.toString()).split('\n');
    tail = lines.pop() ?? '';
    for (const line of lines) {
      const match = SERVER_ERROR.exec(line);
      if (match) errors.set(`${match[1]} ${match[2]}`, match[3]!);
      else if (!/^\s+at /.test(line)) process.stderr.write(`${line}\n`);
    }
  });
  return async (method, url) => {
    const key = `${method} ${url}`;
    for (const deadline = Date.now() + LOG_WAIT_MS; !errors.has(key) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
    const error = errors.get(key);
    errors.delete(key);
    return error;
  };
}

export const fuzzEngine = (): Engine => (process.env.FUZZ_ENGINE === 'clickhouse' ? 'clickhouse' : 'duckdb');

const serverBin = () => join(dirname(createRequire(import.meta.url).resolve('@svc/server/package.json')), 'bin/svc-server.mjs');

/** The engine's command-line options and what stops its servers. */
async function engineOptions(engine: Engine): Promise<{ args: string[]; stop: () => Promise<unknown> }> {
  if (engine === 'duckdb') return { args: [], stop: async () => undefined };
  const [clickhouse, postgres] = await Promise.all([startClickHouse(), startPostgres()]);
  return {
    args: ['--engine', 'clickhouse', '--clickhouse-url', clickhouse.url, '--clickhouse-database', 'svc_fuzz', '--postgres-url', postgres.url],
    stop: () => Promise.all([clickhouse.stop(), postgres.stop()]),
  };
}

export async function startServer(engine: Engine = fuzzEngine()): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-fuzz-'));
  const options = await engineOptions(engine);
  const args = ['--max-semi-space-size=16', serverBin(), 'start', '--data-dir', dataDir, '--port', '0', '--engine-nice', '0', ...options.args];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const loggedError = watchLog(child);
  const printed = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server printed no keys in 60 s:\n${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/deployment .*: \S+/.test(output) && /secret key:/.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
  }).catch(async (error: unknown) => {
    await options.stop();
    throw error;
  });
  const field = (pattern: RegExp) => pattern.exec(printed)![1]!;
  return {
    engine,
    url: field(/ingest\s+(http:\/\/\S+)/),
    apiKey: field(/API key:\s+(\S+)/),
    secretKey: field(/secret key:\s+(\S+)/),
    deploymentKey: field(/deployment [^:]+: (\S+)/),
    child,
    loggedError,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
      await options.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
