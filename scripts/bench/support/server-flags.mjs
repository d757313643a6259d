// The Node flags the server runs with: those of its bin's shebang (`#!/usr/bin/env -S node FLAGS`).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const serverBin = fileURLToPath(new URL('../../../packages/server/bin/svc-server.mjs', import.meta.url));

export const serverFlags = () => readFileSync(serverBin, 'utf8').split('\n')[0].split(/\s+/).slice(3);
