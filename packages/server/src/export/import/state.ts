// The import's state file: the target it imports into, and per archive the hours completed
// (every event of the hour acknowledged by the target) and whether the whole file is. Written
// to a temporary file then renamed, so a crash leaves the old state or the new one; a state
// that cannot be read (cut, or not ours) is reported and the import starts over, which the
// target's insert_id deduplication makes safe.
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

interface FileState {
  name: string;
  size: number;
  done: boolean;
  hours: string[];
}

interface StateDocument {
  version: 1;
  target: string;
  files: FileState[];
}

/** A key as the state records it: the start of its SHA-256, which names it without giving it away. */
export const fingerprint = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 12);

/** The target as the state records it: the URL and a fingerprint of the API key. */
export function targetOf(url: string, apiKey: string): string {
  return `${url} key ${fingerprint(apiKey)}`;
}

export class ImportState {
  /** By file name: names are data, so a Map. */
  private readonly files = new Map<string, { size: number; done: boolean; hours: Set<string> }>();

  private constructor(
    readonly path: string,
    private readonly target: string,
  ) {}

  /** The state at `path` for `target`; `problem` says why a file there was not used. */
  static load(path: string, target: string): { state: ImportState; problem?: string } {
    const state = new ImportState(path, target);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      return { state };
    }
    let document: StateDocument;
    try {
      document = JSON.parse(text) as StateDocument;
      if (document.version !== 1 || !Array.isArray(document.files)) throw new Error('not an import state');
    } catch (failure) {
      return { state, problem: `the state file ${path} is unreadable (${(failure as Error).message}): starting over (insert_ids keep the target from storing an event twice)` };
    }
    if (document.target !== target) throw new Error(`the state file ${path} belongs to an import into ${document.target}: pass another --state for this target`);
    for (const file of document.files) state.files.set(file.name, { size: file.size, done: file.done, hours: new Set(file.hours) });
    return { state };
  }

  /** The file's record, restarted when the file is not the one recorded (another size). */
  private file(name: string, size: number) {
    let file = this.files.get(name);
    if (!file || file.size !== size) {
      file = { size, done: false, hours: new Set() };
      this.files.set(name, file);
    }
    return file;
  }

  isFileDone(name: string, size: number): boolean {
    return this.file(name, size).done;
  }

  isHourDone(name: string, size: number, hour: string): boolean {
    return this.file(name, size).hours.has(hour);
  }

  completeHour(name: string, size: number, hour: string): void {
    this.file(name, size).hours.add(hour);
  }

  completeFile(name: string, size: number): void {
    this.file(name, size).done = true;
  }

  save(): void {
    const document: StateDocument = { version: 1, target: this.target, files: [...this.files].map(([name, file]) => ({ name, size: file.size, done: file.done, hours: [...file.hours] })) };
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(document, null, 1)}\n`);
    renameSync(temporary, this.path);
  }
}
