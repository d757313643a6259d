// The key that signs the links this server hands out (cohort files): one per shared directory,
// made on first use, so that links stay valid across a restart and verify on every process.
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function linkSecret(dir: string): Buffer {
  const file = join(dir, 'link-secret');
  // Written aside, then linked in whole: a process starting at the same time never reads a
  // file that is created but not yet written, and the first link wins.
  const draft = `${file}.${process.pid}.tmp`;
  writeFileSync(draft, randomBytes(32).toString('hex'), { mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}
