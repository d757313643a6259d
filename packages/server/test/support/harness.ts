// Starts the server in this process on a temporary data directory and a free port, with a
// Prism proxy (`prism proxy <role document> <server> --errors`) in front of it for each
// host role a test file uses: every answer that reaches a test through the proxy conforms
// to the spec, or the proxy turns it into an error the test sees. Request validation stays
// off in the proxy: the server's own validation is what the tests exercise.
// The engine and entity databases: `testEngine` (SVC_TEST_ENGINE, SVC_TEST_POSTGRES).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort, prepareDocuments } from '@svc/mock';
import pg from 'pg';
import { inject } from 'vitest';
import { startServer, type RunningServer, type ServerConfig } from '../../src/server.js';
import type { IssuedDeployment, IssuedProject } from '../../src/shared/tenancy.js';

export interface Harness {
  server: RunningServer;
  dataDir: string;
  /** With the keys the server showed once, when it created them. */
  project: IssuedProject;
  otherProject: IssuedProject;
  deployment: IssuedDeployment;
  /** Base URL of the proxy in front of each requested host role. */
  proxied: Record<string, string>;
  /** Base URL of the server itself (for requests Prism cannot forward, e.g. gzip bodies). */
  direct: string;
  close(): Promise<void>;
}

function prismBin(): string {
  const require = createRequire(import.meta.url);
  const pkgFile = require.resolve('@stoplight/prism-cli/package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { bin: string | Record<string, string> };
  return join(dirname(pkgFile), typeof pkg.bin === 'string' ? pkg.bin : pkg.bin.prism!);
}

export async function waitForPort(port: number, child?: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`process exited early with ${child.exitCode}`);
    const open = await new Promise<boolean>((ok) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        ok(true);
      });
      socket.on('error', () => ok(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
}

/**
 * Starts Prism on a free port, and again on another one when that port was taken meanwhile by
 * another process (Prism then ends with EADDRINUSE while the other process answers on the port:
 * only Prism's own "listening" line tells the two apart).
 */
export async function startProxy(file: string, upstream: string): Promise<{ url: string; child: ChildProcess }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const args = [prismBin(), 'proxy', file, upstream, '--host', '127.0.0.1', '--port', String(port), '--errors', '--validate-request', 'false', '--verboseLevel', 'info'];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, FORCE_COLOR: '0' } });
    if (await prismListens(child, port)) return { url: `http://127.0.0.1:${port}`, child };
    if (attempt === 3) throw new Error(`Prism did not start on ${file}`);
  }
}

/** Whether Prism says it listens on `port` (false when it ends first); its later output is dropped. */
function prismListens(child: ChildProcess, port: number, timeoutMs = 60_000): Promise<boolean> {
  const ready = `Prism is listening on http://127.0.0.1:${port}`;
  return new Promise((resolve, reject) => {
    let tail = '';
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      child.stdout!.off('data', read);
      child.off('exit', ended);
      child.stdout!.resume();
      outcome();
    };
    const read = (chunk: Buffer) => {
      const text = tail + chunk.toString();
      if (text.includes(ready)) settle(() => resolve(true));
      // The end of the text: the line may come in two chunks.
      tail = text.slice(-ready.length);
    };
    const ended = () => settle(() => resolve(false));
    const timer = setTimeout(() => settle(() => reject(new Error(`Prism did not listen on port ${port} after ${timeoutMs} ms`))), timeoutMs);
    child.stdout!.on('data', read);
    child.once('exit', ended);
  });
}

/** A new database on the PostgreSQL server at `serverUrl`: its URL. */
async function freshPostgresDatabase(serverUrl: string): Promise<string> {
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client(serverUrl);
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.href;
}

/**
 * A test server's engine process runs at the tests' priority: on CI's 2 cores, busy with the
 * other test files, a lowered engine (niceness 10, its session group too) took longer than a
 * test's 30 s to load 30,000 events, and an idle one (the default) would wait longer still.
 * process-rpc.test.ts tests the priority itself.
 */
export const TEST_PRIORITY = { engineNice: 0 } satisfies Partial<ServerConfig>;

/**
 * The engine a test server runs on, with fresh databases: ClickHouse (and PostgreSQL for the
 * entities) on the run's servers with SVC_TEST_ENGINE=clickhouse; DuckDB otherwise, with the
 * entities on PostgreSQL when SVC_TEST_POSTGRES names a server. A restarted server passes
 * the same config again to find its data.
 */
export async function testEngine(): Promise<Partial<ServerConfig>> {
  if (process.env.SVC_TEST_ENGINE === 'clickhouse') {
    return {
      ...TEST_PRIORITY,
      engine: 'clickhouse',
      clickhouseUrl: inject('clickhouseUrl'),
      clickhouseShardUrls: inject('clickhouseShards')?.shardUrls,
      clickhouseCluster: inject('clickhouseShards')?.cluster,
      clickhouseDatabase: `svc_test_${randomBytes(6).toString('hex')}`,
      postgresUrl: await freshPostgresDatabase(inject('postgresUrl')),
    };
  }
  const postgres = process.env.SVC_TEST_POSTGRES;
  return { ...TEST_PRIORITY, ...(postgres ? { postgresUrl: await freshPostgresDatabase(postgres) } : {}) };
}

export async function startHarness(roles: string[], config: Partial<ServerConfig> = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-server-test-'));
  const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, loadIntervalMs: 200, ...(await testEngine()), ...config });
  const org = server.tenancy.createOrganization('Test organization');
  const project = server.tenancy.createProject(org.id, 'Test project');
  const otherProject = server.tenancy.createProject(org.id, 'Other project');
  const deployment = server.tenancy.createDeployment(project.app_id, 'test-deployment');
  server.tenancy.createFeedbackSource(project.app_id, 'test-webhook', 'webhook');
  server.tenancy.createFeedbackSource(project.app_id, 'test-integration', 'integration');
  const documents = prepareDocuments({ outDir: join(dataDir, 'prism') });
  const proxies = await Promise.all(roles.map((role) => startProxy(documents[role]!.file, server.urls[role]!)));
  return {
    server,
    dataDir,
    project: { ...server.tenancy.projectOf(project.app_id)!, secret_key: project.secret_key },
    otherProject,
    deployment,
    proxied: Object.fromEntries(roles.map((role, i) => [role, proxies[i]!.url])),
    direct: server.urls[roles[0] ?? 'ingest']!,
    async close() {
      for (const { child } of proxies) child.kill('SIGTERM');
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
