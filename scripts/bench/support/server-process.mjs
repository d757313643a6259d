// Runs the reference server the way a user does (`svc-server start`, with its bin's Node
// flags, on a fresh data directory) in a process of its own, on DuckDB or on ClickHouse with
// PostgreSQL for the other entities (private servers on loopback from scripts/clickhouse and
// scripts/postgres). The demo project's keys come from what the server prints.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClickHouse } from '../../clickhouse/start.mjs';
import { startPostgres } from '../../postgres/start.mjs';
import { serverBin, serverFlags } from './server-flags.mjs';

/** The engine's command-line options, the ClickHouse server's pid and URL, and what stops its servers. */
async function engineOptions(engine) {
  if (engine === 'duckdb') return { args: [], clickhousePid: undefined, clickhouseUrl: undefined, stop: async () => undefined };
  if (engine !== 'clickhouse') throw new Error('the engine is duckdb or clickhouse');
  const [clickhouse, postgres] = await Promise.all([startClickHouse(), startPostgres()]);
  return {
    args: ['--engine', 'clickhouse', '--clickhouse-url', clickhouse.url, '--clickhouse-database', 'svc_bench', '--postgres-url', postgres.url],
    clickhousePid: clickhouse.pid,
    clickhouseUrl: clickhouse.url,
    stop: () => Promise.all([clickhouse.stop(), postgres.stop()]),
  };
}

/**
 * Starts the server; `nodeArgs` go before the bin (e.g. `--import` of a probe), `onStderr`
 * gets its standard error (forwarded to this process's by default). Its engine runs at
 * `engineNice` (the server's option: idle or a niceness); `serverArgs` are more options of `start`.
 */
export async function startServerProcess({ engine = 'duckdb', engineNice = 'idle', nodeArgs = [], serverArgs = [], env = process.env, onStderr = (chunk) => process.stderr.write(chunk) } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-server-process-'));
  const options = await engineOptions(engine);
  const args = [...serverFlags(), ...nodeArgs, serverBin, 'start', '--data-dir', dataDir, '--port', '0', '--engine-nice', String(engineNice), ...options.args, ...serverArgs];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  child.stderr.on('data', onStderr);
  let output = '';
  const printed = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server printed no keys in 60 s:\n${output}`)), 60_000);
    child.stdout.on('data', (chunk) => {
      output += chunk.toString();
      if (/deployment .*: \S+/.test(output) && /secret key:/.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
  }).catch(async (error) => {
    child.kill('SIGKILL');
    await options.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  const field = (pattern) => pattern.exec(printed)[1];
  return {
    engine,
    dataDir,
    child,
    clickhousePid: options.clickhousePid,
    clickhouseUrl: options.clickhouseUrl,
    url: field(/ingest\s+(http:\/\/\S+)/),
    apiKey: field(/API key:\s+(\S+)/),
    secretKey: field(/secret key:\s+(\S+)/),
    deploymentKey: field(/deployment [^:]+: (\S+)/),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // A server stuck (e.g. in garbage collection near its heap limit) is killed after 10 s.
        const exit = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(killer);
      }
      await options.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
