// Memory of processes and size of directories, read from /proc and the file system (Linux).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** VmRSS and VmHWM (the peak resident set since the process started) of a process, MB; undefined once it is gone. */
export function memory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)[1]);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** The pids of a process's children (Linux's per-thread children lists); none once it is gone. */
export function childrenOf(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

/** The children of a process whose command line holds `text`. */
export const childrenRunning = (pid, text) => childrenOf(pid).filter((child) => readFileSync(`/proc/${child}/cmdline`, 'utf8').includes(text));

/** Bytes of the files under a directory (or of one file), 0 when missing. */
export function bytesUnder(path) {
  let found;
  try {
    found = statSync(path);
  } catch {
    return 0;
  }
  if (!found.isDirectory()) return found.size;
  return readdirSync(path).reduce((sum, name) => sum + bytesUnder(join(path, name)), 0);
}
