// The conversion of an earlier version's tenancy.json (plain keys) to hashes, interrupted by
// a crash at each step of its write: the directory keeps working with the plain file, and the
// next start converts it.
import * as fs from 'node:fs';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { Tenancy } from '../../src/shared/tenancy.js';

/** The fs call that "crashes" the process (throws) the next time it runs. */
let crashAt: 'writeSync' | 'fsyncSync' | 'renameSync' | undefined;
vi.mock('node:fs', async (importOriginal) => {
  const original = await importOriginal<typeof fs>();
  const crashing =
    <Name extends 'writeSync' | 'fsyncSync' | 'renameSync'>(name: Name) =>
    (...args: Parameters<(typeof fs)[Name]>) => {
      if (crashAt === name) {
        crashAt = undefined;
        throw new Error(`crash at ${name}`);
      }
      return (original[name] as (...a: typeof args) => unknown)(...args);
    };
  return { ...original, writeSync: crashing('writeSync'), fsyncSync: crashing('fsyncSync'), renameSync: crashing('renameSync') };
});

const SECRET = 'plain-secret-of-the-earlier-version';
const DEPLOYMENT_KEY = 'server-plain-deployment-key';
const PLAIN = JSON.stringify({
  organizations: [{ id: 1, name: 'Old org' }],
  projects: [{ app_id: 100001, name: 'Old', org_id: 1, api_key: 'old-api-key', secret_key: SECRET, deployments: [{ name: 'web', key: DEPLOYMENT_KEY, app_id: 100001 }], feedback_sources: [] }],
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-conversion-'));
  writeFileSync(join(dir, 'tenancy.json'), PLAIN);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function expectOldKeysWork(tenancy: Tenancy): Promise<void> {
  expect((await tenancy.projectByCredentials('old-api-key', SECRET))?.app_id).toBe(100001);
  expect(await tenancy.projectByCredentials('old-api-key', 'not-the-secret')).toBeUndefined();
  expect((await tenancy.deploymentByKey(DEPLOYMENT_KEY))?.name).toBe('web');
}

test.each(['writeSync', 'fsyncSync', 'renameSync'] as const)('a crash at %s of the conversion leaves the plain file whole; the next start converts it', async (step) => {
  crashAt = step;
  expect(() => new Tenancy(dir)).toThrow(`crash at ${step}`);
  expect(readFileSync(join(dir, 'tenancy.json'), 'utf8')).toBe(PLAIN);
  const tenancy = new Tenancy(dir);
  await expectOldKeysWork(tenancy);
  expect(readdirSync(dir)).toEqual(['tenancy.json']);
  const stored = readFileSync(join(dir, 'tenancy.json'), 'utf8');
  expect(stored).not.toContain(SECRET);
  expect(stored).not.toContain(DEPLOYMENT_KEY);
  await expectOldKeysWork(new Tenancy(dir));
});
