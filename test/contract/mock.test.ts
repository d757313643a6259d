// The mock serves every operation of every bundle: one merged, valid document per host role.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { mockDistDir } from '@svc/mock';
import { describe, expect, inject, test } from 'vitest';
import { loadBundles, specsDistDir } from '@svc/openapi-validation';

const urls = inject('mockUrls');
const bundles = loadBundles();
const roles = [
  ...new Set(bundles.flatMap((b) => [b.hostRole, ...Object.values(b.operationServers).flatMap((list) => list.map((s) => s.hostRole))])),
];

function redoclyBin(): string {
  // @redocly/cli is a dependency of @svc/specs, which the contract tests depend on.
  const require = createRequire(join(specsDistDir(), '..', 'package.json'));
  const pkgFile = require.resolve('@redocly/cli/package.json');
  const bin = JSON.parse(readFileSync(pkgFile, 'utf8')).bin;
  return join(dirname(pkgFile), typeof bin === 'string' ? bin : bin.redocly);
}

test('every host role of apis.json has a running mock', () => {
  expect(Object.keys(urls).sort()).toEqual([...roles].sort());
});

/** The operations of a bundle served by `role`: by the servers they declare, else by the bundle's role. */
const servedBy = (bundle: (typeof bundles)[number], role: string) =>
  bundle.operations.filter((id) => (bundle.operationServers[id] ?? [{ hostRole: bundle.hostRole }]).some((s) => s.hostRole === role));

for (const role of roles) {
  describe(`host role ${role}`, () => {
    const file = join(mockDistDir, `${role}.json`);
    const groups = bundles.filter((b) => servedBy(b, role).length > 0);

    test(`merged document has every operation served by ${role} of ${groups.map((g) => g.name).join(', ')}`, () => {
      const merged = JSON.parse(readFileSync(file, 'utf8'));
      const ids = Object.values(merged.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((item) =>
        Object.values(item).flatMap((op) => (op && typeof op === 'object' && op.operationId ? [op.operationId] : [])),
      );
      expect(ids.sort()).toEqual(groups.flatMap((g) => servedBy(g, role)).sort());
      expect(merged['x-svc-host-role']).toBe(role);
    });

    test('merged document passes redocly lint (minimal ruleset)', async () => {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [redoclyBin(), 'lint', file, '--extends=minimal', '--format=summary'], {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', NO_COLOR: '1' },
      }).catch((error: { stdout: string; stderr: string }) => {
        throw new Error(`redocly lint failed:\n${error.stdout}\n${error.stderr}`);
      });
      expect(`${stdout}${stderr}`).not.toMatch(/\berror\b/i);
    });
  });
}
