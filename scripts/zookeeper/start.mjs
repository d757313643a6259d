#!/usr/bin/env node
// Starts Debian's ZooKeeper (package `zookeeper`, 3.8) standalone for tests: in a fresh
// temporary directory, its client port on a free loopback port and nothing else listening (no
// admin server). ClickHouse's replicated tables keep their replication log in it. Resolves once
// it names its data directory (`conf`).
//
//   node scripts/zookeeper/start.mjs      prints host:port, runs until interrupted
//   import { startZooKeeper } from '.../scripts/zookeeper/start.mjs'
//   const { port, stop } = await startZooKeeper();
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, portTaken, supervise } from '../loopback.mjs';

// The jar's manifest names the jars it needs in /usr/share/java.
const JAR = process.env.ZOOKEEPER_JAR ?? '/usr/share/java/zookeeper.jar';

/** Whether the server at `port` serves `dataDir` (four-letter word `conf`): another server that took the port answers too. */
function answers(port, dataDir) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.end('conf'));
    let reply = '';
    socket.setTimeout(1000, () => socket.destroy());
    socket.on('data', (chunk) => (reply += chunk));
    socket.on('close', () => resolve(reply.split('\n').some((line) => line.startsWith(`dataDir=${dataDir}`))));
    socket.on('error', () => resolve(false));
  });
}

/** Starts a server; resolves to its client `port`, its directory and `stop()` (ends it and removes the directory). */
export async function startZooKeeper(options = {}) {
  // A port found free can be taken before the server binds it (tests start servers in parallel).
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (error.code !== 'EADDRINUSE' || attempt === 5) throw error;
    }
  }
}

async function startOnce({ timeoutMs = 30_000 }) {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'svc-zookeeper-'));
  mkdirSync(join(dir, 'data'));
  const port = await freePort();
  // Short ticks and session limits: a killed ClickHouse node's session ends within seconds.
  writeFileSync(
    join(dir, 'zoo.cfg'),
    [`dataDir=${dir}/data`, `clientPort=${port}`, 'clientPortAddress=127.0.0.1', 'tickTime=500', 'maxSessionTimeout=10000', 'admin.enableServer=false', '4lw.commands.whitelist=conf', 'forceSync=no'].join('\n'),
  );
  const child = spawn('java', ['-Xmx256m', '-cp', JAR, 'org.apache.zookeeper.server.ZooKeeperServerMain', join(dir, 'zoo.cfg')], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    if (stderr.length < 20_000) stderr += chunk;
  });
  let failedToStart = null;
  child.on('error', (error) => (failedToStart = error.message));
  const { exited, stop } = supervise(child, () => rmSync(dir, { recursive: true, force: true }));
  while (!(await answers(port, join(dir, 'data')))) {
    const ended = failedToStart ?? (exited() && (exited().code ?? exited().signal));
    if (ended || performance.now() - started > timeoutMs) {
      // A process that never started has no exit to wait for.
      if (failedToStart) rmSync(dir, { recursive: true, force: true });
      else await stop();
      // It exits without a word (no logger bound) when its port was taken.
      const taken = Boolean(ended) && !failedToStart && (await portTaken(port));
      throw Object.assign(new Error(`zookeeper ${ended ? `exited (${ended})` : `did not answer within ${timeoutMs} ms`}${taken ? `: port ${port} was taken` : ''}:\n${stderr.trim()}`), taken ? { code: 'EADDRINUSE' } : {});
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { port, dir, pid: child.pid, startMs: performance.now() - started, stop };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const server = await startZooKeeper();
  console.log(`127.0.0.1:${server.port}`);
  console.error(`zookeeper pid ${server.pid} in ${server.dir}, answered after ${Math.round(server.startMs)} ms`);
  const stop = () => server.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
