// The admin command: organizations, projects and deployments, and flag files checked
// against the project's deployments before they are set.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { main } from '../src/cli.js';
import { flagFile } from '../src/experiment/handlers.js';
import { Tenancy } from '../src/shared/tenancy.js';

let dataDir: string;
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-admin-'));
  vi.spyOn(console, 'log').mockImplementation(() => undefined);
});
afterAll(() => {
  vi.restoreAllMocks();
  rmSync(dataDir, { recursive: true, force: true });
});

const admin = (...args: string[]) => main(['admin', ...args, '--data-dir', dataDir]);

test('set-flags refuses a flag that names a deployment the project does not have, and keeps the flags set before', async () => {
  await admin('create-org', 'Acme');
  await admin('create-project', '1', 'Web');
  const appId = new Tenancy(dataDir).projects[0]!.app_id;
  await admin('create-deployment', String(appId), 'web');
  const file = (name: string, flags: unknown) => {
    const path = join(dataDir, name);
    writeFileSync(path, JSON.stringify(flags));
    return path;
  };
  await admin('set-flags', String(appId), file('good.json', [{ key: 'banner', variants: { on: {} }, deployments: ['web'] }]));
  expect(existsSync(flagFile(dataDir, appId))).toBe(true);
  await expect(admin('set-flags', String(appId), file('bad.json', [{ key: 'banner', variants: { on: {} }, deployments: ['web', 'ios'] }]))).rejects.toThrow(
    `banner.deployments: app_id ${appId} has no deployment ios`,
  );
  await expect(admin('set-flags', String(appId), file('dependency.json', [{ key: 'a', variants: { on: {} }, deployments: ['web'], rules: [{ when: [{ property: 'flags.b', op: 'is', values: ['on'] }], variant: 'on' }] }, { key: 'b', variants: { on: {} }, deployments: [] }]))).rejects.toThrow(
    /a\.deployments: depends on "b", which web does not serve/,
  );
  expect(JSON.parse(readFileSync(flagFile(dataDir, appId), 'utf8'))).toEqual([{ key: 'banner', variants: { on: {} }, deployments: ['web'] }]);
});

test('set-time-zone takes IANA names only; the project keeps its zone', async () => {
  const appId = new Tenancy(dataDir).projects[0]!.app_id;
  await expect(admin('set-time-zone', String(appId), 'Mars/Olympus')).rejects.toThrow('Mars/Olympus is not an IANA time zone');
  expect(new Tenancy(dataDir).projectOf(appId)!.time_zone).toBeUndefined();
  await admin('set-time-zone', String(appId), 'Europe/Berlin');
  expect(new Tenancy(dataDir).projectOf(appId)!.time_zone).toBe('Europe/Berlin');
  await expect(admin('set-time-zone', '999', 'UTC')).rejects.toThrow('no project with app_id 999');
});

test('grant-taxonomy gives a project the taxonomy entitlement', async () => {
  const appId = new Tenancy(dataDir).projects[0]!.app_id;
  expect(new Tenancy(dataDir).projectOf(appId)!.taxonomy).toBeUndefined();
  await admin('grant-taxonomy', String(appId));
  expect(new Tenancy(dataDir).projectOf(appId)!.taxonomy).toBe(true);
  await expect(admin('grant-taxonomy', '999')).rejects.toThrow('no project with app_id 999');
});

test('stream destinations: added with a sync_id unique across projects and an optional event-type filter, refused for other than http(s) URLs, removed by sync_id', async () => {
  const appId = new Tenancy(dataDir).projects[0]!.app_id;
  await admin('add-stream-destination', String(appId), 'https://hooks.example.com/all');
  await admin('add-stream-destination', String(appId), 'http://127.0.0.1:9000/hook', '--event-types', 'Play, Pause,');
  await expect(admin('add-stream-destination', String(appId), 'ftp://example.com/hook')).rejects.toThrow('ftp://example.com/hook is not an http(s) URL');
  const [all, filtered] = new Tenancy(dataDir).projectOf(appId)!.stream_destinations!;
  expect(all).toEqual({ sync_id: expect.stringMatching(/^\d+$/), url: 'https://hooks.example.com/all', created_at: expect.any(Number), signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/) });
  expect(filtered).toMatchObject({ url: 'http://127.0.0.1:9000/hook', event_types: ['Play', 'Pause'] });
  expect(filtered!.sync_id).not.toBe(all!.sync_id);
  await admin('remove-stream-destination', all!.sync_id);
  expect(new Tenancy(dataDir).projectOf(appId)!.stream_destinations).toEqual([filtered]);
  await expect(admin('remove-stream-destination', all!.sync_id)).rejects.toThrow(`no stream destination ${all!.sync_id}`);
});

test("a stream destination's signing secret is printed once, at creation and at each rotation, and never listed", async () => {
  const appId = new Tenancy(dataDir).projects[0]!.app_id;
  const added = await printed('add-stream-destination', String(appId), 'https://hooks.example.com/signed');
  const destination = new Tenancy(dataDir).projectOf(appId)!.stream_destinations!.find((d) => d.url === 'https://hooks.example.com/signed')!;
  expect(added).toContain(`signing secret (shown once; verify deliveries with it): ${destination.signing_secret}`);
  const rotated = await printed('rotate-stream-secret', destination.sync_id);
  const after = new Tenancy(dataDir).projectOf(appId)!.stream_destinations!.find((d) => d.sync_id === destination.sync_id)!;
  expect(after.signing_secret).not.toBe(destination.signing_secret);
  expect(rotated).toContain(after.signing_secret);
  expect(await printed('list')).not.toContain(after.signing_secret!.slice('whsec_'.length, 20));
  await expect(admin('rotate-stream-secret', '99999999')).rejects.toThrow('no stream destination 99999999');
});

/** What an admin command printed. */
async function printed(...args: string[]): Promise<string> {
  const log = vi.mocked(console.log);
  log.mockClear();
  await admin(...args);
  return log.mock.calls.map((call) => call.join(' ')).join('\n');
}

const keyIdOf = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 8);

test('secret and deployment keys are printed once, when created or rotated; list shows their key ids, creation and expiry times, never the keys', async () => {
  const created = await printed('create-project', '1', 'Rotated');
  const secret = /secret key: (\S+)/.exec(created)![1]!;
  const appId = /app_id (\d+)/.exec(created)![1]!;
  const deploymentKey = /: (server-\S+)/.exec(await printed('create-deployment', appId, 'ios'))![1]!;
  const rotated = await printed('rotate-secret', appId, '--grace-hours', '2');
  const newSecret = /secret key: (\S+)/.exec(rotated)![1]!;
  const newDeploymentKey = /deployment ios: (\S+)/.exec(await printed('rotate-deployment-key', appId, 'ios'))![1]!;
  expect(new Set([secret, newSecret, deploymentKey, newDeploymentKey]).size).toBe(4);

  const listed = await printed('list');
  for (const key of [secret, newSecret, deploymentKey, newDeploymentKey]) expect(listed).not.toContain(key);
  const time = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';
  expect(listed).toMatch(new RegExp(`secret key id ${keyIdOf(secret)}, created ${time}, expires ${time}`));
  expect(listed).toMatch(new RegExp(`secret key id ${keyIdOf(newSecret)}, created ${time}$`, 'm'));
  expect(listed).toMatch(new RegExp(`deployment ios key id ${keyIdOf(deploymentKey)}, created ${time}, expires ${time}`));
  expect(listed).toMatch(new RegExp(`deployment ios key id ${keyIdOf(newDeploymentKey)}, created ${time}$`, 'm'));
  const [, created2, expires] = new RegExp(`key id ${keyIdOf(secret)}, created (${time}), expires (${time})`).exec(listed)!;
  expect(Date.parse(expires!) - Date.parse(created2!)).toBeGreaterThanOrEqual(2 * 3_600_000);
  expect(Date.parse(expires!) - Date.now()).toBeLessThanOrEqual(2 * 3_600_000);

  await expect(admin('rotate-secret', appId, '--grace-hours', 'soon')).rejects.toThrow('--grace-hours is a number of hours, 0 or more');
  await expect(admin('rotate-deployment-key', appId, 'android')).rejects.toThrow(`app_id ${appId} has no deployment android`);
  // Deployments are rotated by name: a second one of the same name is refused.
  await expect(admin('create-deployment', appId, 'ios')).rejects.toThrow(`app_id ${appId} has a deployment ios already`);
  await expect(admin('rotate-secret', '999')).rejects.toThrow('no project with app_id 999');
});
