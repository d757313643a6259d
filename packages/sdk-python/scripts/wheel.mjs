// Builds the wheel (dist/) with Debian's pip and setuptools, offline and without build isolation.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { python } from './python.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
rmSync(resolve(root, 'dist'), { recursive: true, force: true });
rmSync(resolve(root, 'build'), { recursive: true, force: true });
execFileSync(python, ['-m', 'pip', 'wheel', '--quiet', '--no-deps', '--no-build-isolation', '--no-index', '--wheel-dir', 'dist', '.'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' },
});
rmSync(resolve(root, 'build'), { recursive: true, force: true });
rmSync(resolve(root, 'svc_sdk.egg-info'), { recursive: true, force: true });
