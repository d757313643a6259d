// The Node flags the server runs with: those of its bin's shebang (`#!/usr/bin/env -S node FLAGS`).
import { spawn, spawnSync } from 'node:child_process';
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

/** `svc-server start` on a loaded data directory (its engine at `engineNice`); resolves with its process and the app host's URL. */
export async function startServerOn(dir, engineNice = 'idle') {
  const child = spawn(process.execPath, [...serverFlags(), serverBin, 'start', '--data-dir', dir, '--port', '0', '--engine-nice', String(engineNice)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server printed no URL in 120 s:\n${output}`)), 120_000);
    child.stdout.on('data', (chunk) => {
      output += chunk.toString();
      const match = /\bapp\s+(http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
  });
  return { child, url };
}
