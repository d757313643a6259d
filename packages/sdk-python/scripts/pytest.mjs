// Installs the wheel from dist/ into a temporary folder and runs the tests against that
// installed copy (not the source tree), so that the package's installability is tested too.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { python } from './python.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const wheel = readdirSync(join(root, 'dist')).find((f) => f.endsWith('.whl'));
if (!wheel) throw new Error('no wheel in dist/: run the build first');
const site = mkdtempSync(join(tmpdir(), 'svc-sdk-python-site-'));
const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_ROOT_USER_ACTION: 'ignore', PYTHONDONTWRITEBYTECODE: '1' };
try {
  execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--no-deps', '--no-index', '--target', site, join(root, 'dist', wheel)], { stdio: 'inherit', env });
  execFileSync(python, ['-P', '-m', 'pytest', '-q', '-p', 'no:cacheprovider', ...process.argv.slice(2), 'tests'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...env, PYTHONPATH: site, SVC_SDK_PYTHON_SITE: site },
  });
} catch (error) {
  process.exitCode = error.status ?? 1;
} finally {
  rmSync(site, { recursive: true, force: true });
}
