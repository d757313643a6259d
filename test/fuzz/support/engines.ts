// The server the suites fuzz, on the engine FUZZ_ENGINE names (DuckDB by default, or ClickHouse
// with PostgreSQL): started as a user runs it by the benches' scripts/bench/support/server-process.mjs.
// Its engine runs at the tests' priority (--engine-nice 0): on CI's 2 cores, busy with other
// tests, an idle engine waits. The errors it logs for its 5xx answers are kept for the failures.
import { type ServerProcess, startServerProcess } from '../../../scripts/bench/support/server-process.mjs';

export type Engine = 'duckdb' | 'clickhouse';

export interface RunningServer extends ServerProcess {
  /** The error the server logged for its 5xx answer to `method url` (its answer's body says only "Internal server error"). */
  loggedError(method: string, url: string): Promise<string | undefined>;
}

export const fuzzEngine = (): Engine => (process.env.FUZZ_ENGINE === 'clickhouse' ? 'clickhouse' : 'duckdb');

/** `METHOD URL answered 5xx: message` (then the stack, indented), as the server logs a 5xx. */
const SERVER_ERROR = /^(\S+) (\S+) answered 5\d\d: (.*)$/;
const LOG_WAIT_MS = 500;

export async function startServer(engine: Engine = fuzzEngine()): Promise<RunningServer> {
  const errors = new Map<string, string>();
  let tail = '';
  // Keeps the errors logged for 5xx answers, and forwards the other lines (their stacks are dropped).
  const onStderr = (chunk: Buffer) => {
    const lines = (tail + chunk.toString()).split('\n');
    tail = lines.pop() ?? '';
    for (const line of lines) {
      const match = SERVER_ERROR.exec(line);
      if (match) errors.set(`${match[1]} ${match[2]}`, match[3]!);
      else if (!/^\s+at /.test(line)) process.stderr.write(`${line}\n`);
    }
  };
  // A cost budget no run spends: past the documented one every reporting request would be a 429, which reaches no engine.
  const server = await startServerProcess({ engine, engineNice: 0, onStderr, serverArgs: ['--reporting-cost-limits', '1000000000,1000000000'] });
  const loggedError = async (method: string, url: string) => {
    const key = `${method} ${url}`;
    for (const deadline = Date.now() + LOG_WAIT_MS; !errors.has(key) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
    const error = errors.get(key);
    errors.delete(key);
    return error;
  };
  return Object.assign(server, { loggedError });
}
