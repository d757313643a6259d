#!/usr/bin/env node
// Starts Debian's clickhouse-server (18.16) for tests and local runs: in a fresh temporary
// directory with its own minimal configuration (data, logs, users), HTTP and native TCP on
// free loopback ports chosen at start and nothing on other interfaces. Resolves once
// `SELECT 1` answers over HTTP.
//
//   node scripts/clickhouse/start.mjs      prints the HTTP URL, runs until interrupted
//   import { startClickHouse } from '.../scripts/clickhouse/start.mjs'
//   const { url, stop } = await startClickHouse();
//   node scripts/clickhouse/start.mjs --dir DIR   the same on DIR's data (created if missing), kept
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync, existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, supervise } from '../loopback.mjs';

const SERVER = process.env.CLICKHOUSE_SERVER_BIN ?? '/usr/sbin/clickhouse-server';

/**
 * `<remote_servers>`: each cluster's shards (native TCP ports on 127.0.0.1): a port is a shard of
 * one server, an array of ports a shard of replicas that replicate themselves (internal_replication).
 */
const remoteServersXml = (clusters) =>
  Object.keys(clusters).length === 0
    ? ''
    : `<remote_servers>${Object.entries(clusters)
        .map(([name, shards]) => {
          const shardXml = (ports) =>
            `<shard>${Array.isArray(ports) ? '<internal_replication>true</internal_replication>' : ''}${[ports].flat().map((port) => `<replica><host>127.0.0.1</host><port>${port}</port></replica>`).join('')}</shard>`;
          return `<${name}>${shards.map(shardXml).join('')}</${name}>`;
        })
        .join('')}</remote_servers>`;

/** ZooKeeper (its client port on 127.0.0.1) and this server's macros, for replicated tables; fetches between replicas over the interserver port. */
const replicationXml = (zookeeper, macros, interserverPort) =>
  zookeeper === undefined
    ? ''
    : `<zookeeper><node><host>127.0.0.1</host><port>${zookeeper}</port></node><session_timeout_ms>6000</session_timeout_ms></zookeeper>
  <macros>${Object.entries(macros).map(([name, value]) => `<${name}>${value}</${name}>`).join('')}</macros>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <interserver_http_port>${interserverPort}</interserver_http_port>`;

const configXml = (dir, { http: httpPort, tcp: tcpPort, interserver }, clusters, zookeeper, macros) => `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>${dir}/log/clickhouse-server.log</log>
    <errorlog>${dir}/log/clickhouse-server.err.log</errorlog>
    <size>100M</size>
    <count>2</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>${dir}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>536870912</mark_cache_size>
  <uncompressed_cache_size>536870912</uncompressed_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <shutdown_wait_unfinished>0</shutdown_wait_unfinished>
  <keep_alive_timeout>30</keep_alive_timeout>
  <mlock_executable>false</mlock_executable>
  ${remoteServersXml(clusters)}
  ${replicationXml(zookeeper, macros, interserver)}
</yandex>
`;

const usersXml = (settings) => `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>4000000000</max_memory_usage>
      <load_balancing>random</load_balancing>
      ${Object.entries(settings).map(([name, value]) => `<${name}>${value}</${name}>`).join('')}
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default>
      <interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval>
    </default>
  </quotas>
</yandex>
`;

/** A file in the server's user_files holding a token of this start. */
const TOKEN_FILE = 'svc-start-token';

/**
 * Whether the server answers with this start's token: another server that took the port
 * answers too. On a connection of its own, closed after (a kept-alive one delays the server's
 * shutdown).
 */
function answers(url, token) {
  const query = `SELECT token FROM file('${TOKEN_FILE}', 'TSV', 'token String')`;
  return new Promise((resolve) => {
    const request = get(`${url}/?query=${encodeURIComponent(query)}`, { agent: false, timeout: 1000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve(response.statusCode === 200 && body.trim() === token));
      response.on('error', () => resolve(false));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/**
 * Starts a server; resolves to its HTTP URL (`http://127.0.0.1:<port>`), the native TCP
 * port, its directory and `stop()` (ends the process, removes the directory unless `keep`).
 * `dir` runs it on that directory's data (created if missing; the configuration is written
 * again with new ports) and keeps it unless `keep` is false: a benchmark's loaded tables are
 * reused next time, a test's server killed and started again is removed at its stop.
 * `clusters` names clusters of other servers (their native TCP ports, a shard each) for
 * Distributed tables; `settings` go into the default user's profile. `zookeeper` (a client port
 * on 127.0.0.1) and `macros` (`shard`, `replica`) make it a replica for ReplicatedMergeTree
 * tables. `ports` starts it again on the ports of an earlier start (with `dir`: a replica killed
 * by `kill()` and restarted, which its peers find again where they knew it).
 */
export async function startClickHouse(options = {}) {
  // A port found free can be taken before the server binds it (tests start servers in parallel).
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (error.code !== 'EADDRINUSE' || options.ports || attempt === 5) throw error;
    }
  }
}

async function startOnce({ timeoutMs = 30_000, keep: keepGiven, dir: givenDir, clusters = {}, settings = {}, zookeeper, macros = {}, ports: givenPorts }) {
  const started = performance.now();
  const dir = givenDir ?? mkdtempSync(join(tmpdir(), 'svc-clickhouse-'));
  let keep = keepGiven ?? givenDir !== undefined;
  for (const sub of ['log', 'data', 'tmp', 'user_files', 'format_schemas']) mkdirSync(join(dir, sub), { recursive: true });
  const ports = givenPorts ?? { http: await freePort(), tcp: await freePort(), interserver: await freePort() };
  const { http: httpPort, tcp: tcpPort } = ports;
  writeFileSync(join(dir, 'config.xml'), configXml(dir, ports, clusters, zookeeper, macros));
  writeFileSync(join(dir, 'users.xml'), usersXml(settings));
  const token = randomUUID();
  writeFileSync(join(dir, 'user_files', TOKEN_FILE), `${token}\n`);
  const child = spawn(SERVER, [`--config-file=${join(dir, 'config.xml')}`], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    if (stderr.length < 20_000) stderr += chunk;
  });
  const cleanUp = () => {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  const { exit, exited, stop } = supervise(child, cleanUp);
  const url = `http://127.0.0.1:${httpPort}`;
  const errorLog = () => {
    const file = join(dir, 'log', 'clickhouse-server.err.log');
    return existsSync(file) ? readFileSync(file, 'utf8').slice(-4000) : '';
  };
  while (!(await answers(url, token))) {
    if (exited() || performance.now() - started > timeoutMs) {
      const why = exited() ? `exited (${exited().code ?? exited().signal})` : `did not answer within ${timeoutMs} ms`;
      const detail = `${stderr}\n${errorLog()}`.trim();
      if (!exited()) child.kill('SIGKILL');
      await exit;
      cleanUp();
      throw Object.assign(new Error(`clickhouse-server ${why}${detail ? `:\n${detail}` : ''}`), detail.includes('Address already in use') ? { code: 'EADDRINUSE' } : {});
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const startMs = performance.now() - started;
  /** Ends the process at once (SIGKILL), as a crash would, keeping its directory for a restart. */
  const kill = async () => {
    keep = true;
    if (!exited()) child.kill('SIGKILL');
    await exit;
  };
  return { url, tcpPort, ports, dir, pid: child.pid, startMs, stop, kill };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { keep: { type: 'boolean' }, dir: { type: 'string' } } });
  const server = await startClickHouse(values);
  console.log(server.url);
  console.error(`clickhouse-server pid ${server.pid} in ${server.dir}, native TCP port ${server.tcpPort}, answered after ${Math.round(server.startMs)} ms`);
  const stop = () => server.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
