import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { specsDir } from './apis.mjs';

/** Runs a CLI installed in node_modules/.bin from the specs folder; exits on failure. */
export function run(bin, args) {
  const result = spawnSync(bin, args, {
    cwd: specsDir,
    stdio: 'inherit',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    shell: false,
  });
  if (result.status !== 0) {
    console.error(`${bin} ${args.join(' ')} failed with status ${result.status}`);
    process.exit(result.status ?? 1);
  }
}

export const binPath = (name) => join(specsDir, '..', 'node_modules', '.bin', name);
