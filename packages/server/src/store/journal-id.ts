// A name for a data dir's journal, kept in the data dir: processes sharing one engine database
// record their loaded segments under it, as their journals name segments alike.
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function journalId(dataDir: string): Promise<string> {
  const path = join(dataDir, 'journal-id');
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const id = randomUUID();
  // `wx`: two processes started on one data dir by mistake do not both take a name.
  await writeFile(path, `${id}\n`, { flag: 'wx' });
  return id;
}
