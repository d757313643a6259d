// `tenancy.json` on disk: written whole to a temporary file, synced and renamed over the old
// one, so that a crash leaves either file complete. A file of an earlier version, with plain
// secret and deployment keys, is converted to hashes when it is read.
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { hashSecret, type StoredSecret } from './stored-secrets.js';

/** The file as earlier versions wrote it: a project's `secret_key`, a deployment's `key`. */
interface PlainProject {
  secret_key?: string;
  secrets?: StoredSecret[];
  deployments: { key?: string; secrets?: StoredSecret[] }[];
}

export function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = openSync(temporary, 'w', 0o600);
  try {
    writeSync(handle, text);
    fsyncSync(handle);
  } finally {
    closeSync(handle);
  }
  renameSync(temporary, file);
  const directory = openSync(dirname(file), 'r');
  try {
    fsyncSync(directory);
  } finally {
    closeSync(directory);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Temporary files that ended processes' interrupted writes left (an earlier version's could hold plain keys). */
function removeLeftovers(file: string): void {
  const pattern = new RegExp(`^${basename(file).replaceAll('.', '\\.')}\\.(\\d+)\\.tmp$`);
  for (const name of readdirSync(dirname(file))) {
    const pid = pattern.exec(name)?.[1];
    if (pid !== undefined && !isRunning(Number(pid))) rmSync(join(dirname(file), name), { force: true });
  }
}

/** Replaces plain keys by their hashes; whether there were any. */
function hashPlainKeys(projects: PlainProject[], now: number): boolean {
  let converted = false;
  const toHashes = (holder: { secrets?: StoredSecret[] }, plain: string | undefined) => {
    if (plain === undefined) return;
    holder.secrets = [...(holder.secrets ?? []), hashSecret(plain, now)];
    converted = true;
  };
  for (const project of projects) {
    toHashes(project, project.secret_key);
    delete project.secret_key;
    for (const deployment of project.deployments) {
      toHashes(deployment, deployment.key);
      delete deployment.key;
    }
  }
  return converted;
}

/** The parsed file (`empty` when there is none), converted in place if it held plain keys. */
export function readTenancyFile<T extends { projects: unknown[] }>(file: string, empty: T, now: number): T {
  if (!existsSync(file)) return empty;
  const data = JSON.parse(readFileSync(file, 'utf8')) as T;
  if (hashPlainKeys(data.projects as PlainProject[], now)) {
    writeAtomically(file, JSON.stringify(data, null, 2));
    removeLeftovers(file);
  }
  return data;
}
