// The data directory holds every project's events and the hashes of its keys: only the
// server's user may read it. Files and directories this process (and the engine process it
// starts, which inherits the mask) creates are 0600 and 0700; looser ones left by earlier
// versions are reported with the command that fixes them.
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const PRIVATE_MASK = 0o077;

/** Paths under `dir` (itself included) that other users may read, write or enter. */
function looseEntries(dir: string): string[] {
  const loose = (statSync(dir).mode & PRIVATE_MASK) !== 0 ? [dir] : [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) loose.push(...looseEntries(path));
    else if (entry.isFile() && (statSync(path).mode & PRIVATE_MASK) !== 0) loose.push(path);
  }
  return loose;
}

/** Creates `dir` private, or warns when an existing one has entries other users may access. */
export function privateDirectory(dir: string, log: (message: string) => void): void {
  process.umask(PRIVATE_MASK);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const loose = looseEntries(dir);
  if (loose.length === 0) return;
  const shown = loose.slice(0, 3).join(', ') + (loose.length > 3 ? `, and ${loose.length - 3} more` : '');
  log(`warning: other users of this machine may read ${shown}; make the data private with: chmod -R go-rwx '${dir}'`);
}
