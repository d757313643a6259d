// Two server processes of one deployment (issue 14): each its own data dir (journal), one shared
// dir for what all of them read: a project made through one is served by the other, and both
// sign links with one secret.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { linkSecret } from '../../../src/shared/link-secret.js';
import { type RunningServer, startServer } from '../../../src/server.js';

let shared: string;
const dataDirs: string[] = [];
const servers: RunningServer[] = [];

beforeAll(async () => {
  shared = mkdtempSync(join(tmpdir(), 'svc-shared-'));
  for (let i = 0; i < 2; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-own-'));
    dataDirs.push(dataDir);
    servers.push(await startServer({ dataDir, sharedDir: shared, host: '127.0.0.1', port: 0, loadIntervalMs: 200 }));
  }
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  for (const dir of [shared, ...dataDirs]) if (dir) rmSync(dir, { recursive: true, force: true });
});

test('tenancy and the link secret are in the shared dir; the journals stay apart', async () => {
  const [a, b] = servers as [RunningServer, RunningServer];
  const project = a.tenancy.createProject(a.tenancy.createOrganization('Org').id, 'Project');
  // The other process reloads the rewritten file (watched every 500 ms).
  await expect.poll(() => b.tenancy.projects.map((p) => p.api_key), { timeout: 5_000 }).toContain(project.api_key);
  const answer = await fetch(`${b.urls.ingest}/2/httpapi`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: project.api_key, events: [{ event_type: 'Page', user_id: 'user-00001', insert_id: 'i-1' }] }),
  });
  expect(answer.status, await answer.clone().text()).toBe(200);

  expect(readFileSync(join(shared, 'link-secret'), 'utf8')).toMatch(/^[0-9a-f]{64}$/);
  expect(linkSecret(shared)).toEqual(Buffer.from(readFileSync(join(shared, 'link-secret'), 'utf8'), 'hex'));
  for (const dataDir of dataDirs) {
    expect(existsSync(join(dataDir, 'link-secret'))).toBe(false);
    expect(existsSync(join(dataDir, 'journal'))).toBe(true);
  }
}, 30_000);
