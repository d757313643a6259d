// The Node flags the server runs with: those of its bin's shebang (`#!/usr/bin/env -S node FLAGS`).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const serverBin = fileURLToPath(new URL('../../../packages/server/bin/svc-server.mjs', import.meta.url));

export const serverFlags = () => readFileSync(serverBin, 'utf8').split('\n')[0].split(/\s+/).slice(3);

/** Runs this script again with the server's Node flags unless it has them (it hosts the server in-process). */
export function withServerFlags() {
  if (serverFlags().every((flag) => process.execArgv.includes(flag))) return;
  const child = spawnSync(process.execPath, [...process.execArgv, ...serverFlags(), ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}
