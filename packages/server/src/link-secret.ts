// The key that signs the links this server hands out (cohort files): one per data
// directory, made on first use, so that links stay valid across a restart.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function linkSecret(dataDir: string): Buffer {
  const file = join(dataDir, 'link-secret');
  try {
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}
