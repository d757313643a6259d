// Secrets at rest on a running server: no file of the data directory holds a secret or
// deployment key (created, rotated, or converted from an earlier version's plain file), a
// rotated-out key works for its grace period and gets 401 after it (moved clock), and the
// data directory is readable by the server's user only.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { main } from '../../src/cli.js';
import { startServer } from '../../src/server.js';
import { type Harness, startHarness, testEngine } from '../support/harness.js';

const HOUR = 3_600_000;
let now = Date.parse('2026-03-02T10:00:00Z');
let h: Harness;
beforeAll(async () => {
  h = await startHarness([], { clock: () => now });
});
afterAll(() => h?.close());

const basic = (apiKey: string, secretKey: string) => ({ authorization: `Basic ${Buffer.from(`${apiKey}:${secretKey}`).toString('base64')}` });
const reportingStatus = async (urls: Record<string, string>, apiKey: string, secretKey: string) => (await fetch(`${urls.app}/api/2/events/list`, { headers: basic(apiKey, secretKey) })).status;
const flagsStatus = async (urls: Record<string, string>, key: string) => (await fetch(`${urls.experiment}/sdk/v2/flags`, { headers: { authorization: `Api-Key ${key}` } })).status;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : entry.isFile() ? [join(dir, entry.name)] : []));
}

/** The files of `dir` whose bytes contain one of `secrets`. */
function filesHolding(dir: string, secrets: string[]): string[] {
  return filesUnder(dir).filter((file) => {
    const bytes = readFileSync(file);
    return secrets.some((secret) => bytes.includes(secret));
  });
}

async function ingestAndFlush(apiKey: string): Promise<void> {
  const events = [{ event_type: 'Viewed', user_id: 'user-1', time: now }];
  const answer = await fetch(`${h.server.urls.ingest}/2/httpapi`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: apiKey, events }) });
  expect(answer.status).toBe(200);
  await h.server.store.flush();
}

test('no file of the data directory holds a secret key or deployment key, after creation and after rotation', async () => {
  await ingestAndFlush(h.project.api_key);
  const created = [h.project.secret_key, h.otherProject.secret_key, h.deployment.key];
  expect(filesUnder(h.dataDir).length).toBeGreaterThan(1);
  expect(filesHolding(h.dataDir, created)).toEqual([]);
  const rotated = h.server.tenancy.rotateSecret(h.project.app_id, HOUR);
  const deployment = h.server.tenancy.rotateDeploymentKey(h.project.app_id, h.deployment.name, HOUR);
  await ingestAndFlush(h.project.api_key);
  expect(filesHolding(h.dataDir, [...created, rotated.secret_key, deployment.key])).toEqual([]);
});

test('a rotated-out secret key or deployment key works for its grace period, then gets 401; the new one works', async () => {
  const { urls, tenancy } = h.server;
  const oldSecret = h.otherProject.secret_key;
  expect(await reportingStatus(urls, h.otherProject.api_key, oldSecret)).toBe(200);
  const { secret_key: newSecret } = tenancy.rotateSecret(h.otherProject.app_id, 24 * HOUR);
  const oldDeploymentKey = tenancy.createDeployment(h.otherProject.app_id, 'rotated').key;
  const { key: newDeploymentKey } = tenancy.rotateDeploymentKey(h.otherProject.app_id, 'rotated', 24 * HOUR);
  now += 23 * HOUR;
  expect(await reportingStatus(urls, h.otherProject.api_key, oldSecret)).toBe(200);
  expect(await reportingStatus(urls, h.otherProject.api_key, newSecret)).toBe(200);
  expect(await flagsStatus(urls, oldDeploymentKey)).toBe(200);
  now += 2 * HOUR;
  expect(await reportingStatus(urls, h.otherProject.api_key, oldSecret)).toBe(401);
  expect(await reportingStatus(urls, h.otherProject.api_key, newSecret)).toBe(200);
  expect(await flagsStatus(urls, oldDeploymentKey)).toBe(401);
  expect(await flagsStatus(urls, newDeploymentKey)).toBe(200);
  // A rotation without grace ends the old key at once.
  const { secret_key: newest } = tenancy.rotateSecret(h.otherProject.app_id, 0);
  expect(await reportingStatus(urls, h.otherProject.api_key, newSecret)).toBe(401);
  expect(await reportingStatus(urls, h.otherProject.api_key, newest)).toBe(200);
});

test('a rotation by the admin command, another process, applies to the running server at once', async () => {
  const { app_id: appId, api_key: apiKey } = h.server.tenancy.createProject(1, 'Rotated by admin');
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const rotate = async () => {
      log.mockClear();
      await main(['admin', 'rotate-secret', String(appId), '--grace-hours', '0', '--data-dir', h.dataDir]);
      return /secret key: (\S+)/.exec(log.mock.calls.join('\n'))![1]!;
    };
    let current = await rotate();
    expect(await reportingStatus(h.server.urls, apiKey, current)).toBe(200);
    // Several rounds: the server's poll of the file (every 500 ms) must not be what passes them.
    for (let round = 0; round < 5; round++) {
      const previous = current;
      current = await rotate();
      expect(await reportingStatus(h.server.urls, apiKey, previous)).toBe(401);
      expect(await reportingStatus(h.server.urls, apiKey, current)).toBe(200);
    }
  } finally {
    log.mockRestore();
  }
});

test('the data directory is 0700, its directories 0700 and its files 0600', async () => {
  await ingestAndFlush(h.project.api_key);
  expect(statSync(h.dataDir).mode & 0o777).toBe(0o700);
  const files = filesUnder(h.dataDir).filter((file) => !file.startsWith(join(h.dataDir, 'prism')));
  expect(files.map((file) => file.slice(h.dataDir.length + 1))).toEqual(expect.arrayContaining(['tenancy.json', expect.stringMatching(/^journal\//)]));
  expect(files.filter((file) => (statSync(file).mode & 0o777) !== 0o600)).toEqual([]);
});

/** A data directory as the version before wrote it: plain keys, files other users may read, a save a crash interrupted. */
function earlierVersionDirectory(secretKey: string, deploymentKey: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-plain-'));
  chmodSync(dir, 0o755);
  const project = { app_id: 100001, name: 'Old', org_id: 1, api_key: 'old-api-key', secret_key: secretKey, deployments: [{ name: 'web', key: deploymentKey, app_id: 100001 }], feedback_sources: [] };
  const text = JSON.stringify({ organizations: [{ id: 1, name: 'Old org' }], projects: [project] }, null, 2);
  writeFileSync(join(dir, 'tenancy.json'), text, { mode: 0o644 });
  writeFileSync(join(dir, 'tenancy.json.999999999.tmp'), text.slice(0, 200), { mode: 0o644 });
  mkdirSync(join(dir, 'flags'), { mode: 0o755 });
  writeFileSync(join(dir, 'flags', '100001.json'), '[]', { mode: 0o644 });
  return dir;
}

test('a data directory of the version before is converted at start: its keys keep working, no file holds them, and the loose modes get a warning with the fix', async () => {
  const secretKey = 'plain-secret-of-the-earlier-version';
  const deploymentKey = 'server-plain-deployment-key-of-the-earlier-version';
  const dataDir = earlierVersionDirectory(secretKey, deploymentKey);
  const logged: string[] = [];
  const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: (message) => logged.push(message), ...(await testEngine()) });
  try {
    expect(logged.join('\n')).toContain(`chmod -R go-rwx '${dataDir}'`);
    expect(filesHolding(dataDir, [secretKey, deploymentKey])).toEqual([]);
    expect(statSync(join(dataDir, 'tenancy.json')).mode & 0o777).toBe(0o600);
    expect(await reportingStatus(server.urls, 'old-api-key', secretKey)).toBe(200);
    expect(await reportingStatus(server.urls, 'old-api-key', 'not-the-secret')).toBe(401);
    expect(await flagsStatus(server.urls, deploymentKey)).toBe(200);
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
