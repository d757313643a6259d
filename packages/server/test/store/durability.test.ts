// A 200 answer means durable: the server process is killed with SIGKILL while batches
// stream in, restarted on the same data directory, and every acknowledged event is there
// (exactly once: the journal replay is idempotent, insert_ids dedupe retries).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@svc/mock';
import { afterAll, expect, test } from 'vitest';
import { startServer } from '../../src/server.js';
import { Tenancy } from '../../src/shared/tenancy.js';
import { TEST_PRIORITY, testEngine, waitForPort } from '../support/harness.js';

const bin = fileURLToPath(new URL('../../bin/svc-server.mjs', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'svc-durability-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const engine = await testEngine();
/** The engine as the CLI's options. */
const engineArgs = [
  '--engine-nice',
  String(TEST_PRIORITY.engineNice),
  ...(engine.engine ? ['--engine', engine.engine] : []),
  ...(engine.clickhouseUrl ? ['--clickhouse-url', engine.clickhouseUrl] : []),
  ...(engine.clickhouseShardUrls ?? []).flatMap((replicas) => ['--clickhouse-shard', replicas.join(',')]),
  ...(engine.clickhouseCluster ? ['--clickhouse-cluster', engine.clickhouseCluster] : []),
  ...(engine.clickhouseDatabase ? ['--clickhouse-database', engine.clickhouseDatabase] : []),
  ...(engine.postgresUrl ? ['--postgres-url', engine.postgresUrl] : []),
];

async function spawnServer(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bin, 'start', '--data-dir', dataDir, '--port', String(port), ...engineArgs], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForPort(port, child);
  return child;
}

test('every acknowledged event survives SIGKILL', async () => {
  const tenancy = new Tenancy(dataDir);
  const project = tenancy.createProject(tenancy.createOrganization('Durability').id, 'Durability');
  const port = await freePort();
  const acknowledged = new Set<string>();
  let sent = 0;
  let child = await spawnServer(port);

  // Senders stream until the server is gone: with group commit every request in flight at
  // the kill may have been acknowledged already, but the next one then finds no server.
  const sender = async (worker: number) => {
    for (let batch = 0; ; batch++) {
      const events = Array.from({ length: 200 }, (_, i) => ({ event_type: 'Durable', device_id: `device-${worker}-${i % 7}`, insert_id: `w${worker}-b${batch}-e${i}` }));
      sent += events.length;
      try {
        const response = await fetch(`http://127.0.0.1:${port}/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: project.api_key, events }) });
        if (response.status === 200) for (const e of events) acknowledged.add(e.insert_id);
        else await response.body?.cancel();
      } catch {
        return; // the server is gone
      }
    }
  };
  const senders = Promise.all([0, 1, 2, 3].map(sender));
  while (acknowledged.size < 20_000) await new Promise((r) => setTimeout(r, 20));
  child.kill('SIGKILL');
  await senders;
  expect(sent).toBeGreaterThan(acknowledged.size);

  // Restart (replays the journal), then stop gracefully and read the store.
  child = await spawnServer(port);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, ...engine });
  try {
    const stored = (await server.store.events(project.app_id)).map((e) => e.insert_id!);
    const storedIds = new Set(stored);
    expect(storedIds.size).toBe(stored.length);
    const missing = [...acknowledged].filter((id) => !storedIds.has(id));
    expect(missing).toEqual([]);
  } finally {
    await server.close();
  }
}, 120_000);
