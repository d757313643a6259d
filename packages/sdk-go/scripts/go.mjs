// Runs `go ARGS…` in this module offline: no module proxy, no checksum database, no toolchain
// download; the module has no dependencies (see templates/client.mustache).
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const result = spawnSync('go', process.argv.slice(2), {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, GOPROXY: 'off', GOSUMDB: 'off', GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' },
});
if (result.error) throw result.error;
process.exitCode = result.status ?? 1;
