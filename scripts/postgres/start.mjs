#!/usr/bin/env node
// Starts Debian's PostgreSQL 15 for tests and local runs: a cluster initdb'd into a fresh
// temporary directory, TCP on a free loopback port (its Unix socket in that directory),
// trust authentication for the superuser `svc` (nothing listens beyond 127.0.0.1), no fsync
// (test data). `pg_ctl start -w` resolves once the server accepts connections.
//
// PostgreSQL refuses to run as root (CI runs as root): then initdb and postgres run as the
// `postgres` user the Debian package creates (SVC_POSTGRES_USER to pick another), through
// util-linux's `setpriv`, which execs in place and needs no PAM session or login shell,
// unlike `runuser`/`su`.
//
//   node scripts/postgres/start.mjs        prints the URL, runs until interrupted
//   import { startPostgres } from '.../scripts/postgres/start.mjs'
//   const { url, stop } = await startPostgres();
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const BIN = process.env.POSTGRES_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
const SUPERUSER = 'svc';

/** The command prefix that runs a PostgreSQL binary as a non-root user, and that user's ids (none when not root). */
function unprivileged() {
  if (process.getuid?.() !== 0) return { prefix: [], ids: undefined };
  const user = process.env.SVC_POSTGRES_USER ?? 'postgres';
  const id = (flag) => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
  return { prefix: ['setpriv', `--reuid=${user}`, `--regid=${user}`, '--init-groups', '--'], ids: { uid: id('-u'), gid: id('-g') } };
}

/** Runs `command` (after `prefix`) to its end; rejects with its output when it fails. */
function run(prefix, command, args) {
  const [file, ...rest] = [...prefix, command, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(file, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited (${code}):\n${output.slice(-4000)}`))));
  });
}

/**
 * Starts a server; resolves to its URL (`postgres://svc@127.0.0.1:<port>/postgres`), its
 * directory and `stop()` (fast shutdown, removes the directory unless `keep`). The
 * postmaster runs detached (pg_ctl); it is stopped when this process exits.
 */
export async function startPostgres({ timeoutMs = 30_000, keep = false } = {}) {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'svc-postgres-'));
  const cleanUp = () => {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  const { prefix, ids } = unprivileged();
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const data = join(dir, 'data');
  try {
    // C collation: text sorts by bytes, as in DuckDB.
    await run(prefix, join(BIN, 'initdb'), ['-D', data, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-sync']);
  } catch (error) {
    cleanUp();
    throw error;
  }
  const ctl = (...args) => run(prefix, join(BIN, 'pg_ctl'), ['-D', data, ...args]);
  // A random port, another one when it is taken: pg_ctl reports a failed bind at once.
  for (let attempt = 1; ; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    const settings = { listen_addresses: '127.0.0.1', port, unix_socket_directories: dir, fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: 50 };
    const options = Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`).join(' ');
    try {
      await ctl('start', '-w', `--timeout=${Math.ceil(timeoutMs / 1000)}`, '-l', join(dir, 'postgres.log'), '-o', options);
    } catch (error) {
      if (attempt < 5 && /could not bind|could not create any TCP/.test(readLog(dir))) continue;
      cleanUp();
      throw new Error(`${error.message}\n${readLog(dir)}`);
    }
    // If this process exits first (not killed by a signal it cannot handle), the server goes with it.
    const stopOnExit = () => {
      spawnSync(prefix[0] ?? join(BIN, 'pg_ctl'), [...prefix.slice(1), ...(prefix.length ? [join(BIN, 'pg_ctl')] : []), '-D', data, 'stop', '-m', 'immediate']);
      cleanUp();
    };
    process.on('exit', stopOnExit);
    const startMs = performance.now() - started;
    let stopping;
    const stop = () =>
      (stopping ??= (async () => {
        process.off('exit', stopOnExit);
        // Fast shutdown: open sessions are ended.
        await ctl('stop', '-w', '-m', 'fast');
        cleanUp();
      })());
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    // A restart as an operator's (fault tests): down, open sessions ended; up again on the same data and port.
    const down = () => ctl('stop', '-w', '-m', 'fast');
    const up = () => ctl('start', '-w', `--timeout=${Math.ceil(timeoutMs / 1000)}`, '-l', join(dir, 'postgres.log'), '-o', options);
    return { url: `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`, port, dir, pid, startMs, stop, down, up };
  }
}

/** The server log's end (the reason a start failed). */
const readLog = (dir) => {
  const file = join(dir, 'postgres.log');
  return existsSync(file) ? readFileSync(file, 'utf8').slice(-4000) : '';
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const server = await startPostgres({ keep: process.argv.includes('--keep') });
  console.log(server.url);
  console.error(`postgres pid ${server.pid} in ${server.dir}, ready after ${Math.round(server.startMs)} ms`);
  // The postmaster is detached: this timer keeps the process (and so the server) running.
  const alive = setInterval(() => undefined, 3_600_000);
  const stop = () => server.stop().then(() => clearInterval(alive));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
