// Reading export archives: the zip files of a source (one file, or every `*.zip` of a folder in
// name order), the hour entries of each (listed from the central directory first, for the
// totals of the progress line), and an entry's JSON lines, gunzipped as they are read.
import { readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import yauzl from 'yauzl';

export interface ArchiveFile {
  path: string;
  /** The file's name: its key in the state file. */
  name: string;
  size: number;
}

export interface HourEntry {
  /** The entry's name, e.g. `187520/187520_2026-11-20_9#0.json.gz`: its key in the state file. */
  name: string;
  /** Its gzip bytes. */
  size: number;
}

/** The archives of a source path: the file itself, or a folder's `*.zip` files in name order. */
export function archiveFiles(source: string): ArchiveFile[] {
  const stat = statSync(source, { throwIfNoEntry: false });
  if (!stat) throw new Error(`${source}: no such export zip or folder`);
  const paths = stat.isDirectory()
    ? readdirSync(source)
        .filter((name) => name.endsWith('.zip'))
        .sort()
        .map((name) => join(source, name))
    : [source];
  return paths.map((path) => ({ path, name: basename(path), size: statSync(path).size }));
}

const openZip = (path: string) =>
  new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.open(path, { lazyEntries: true, autoClose: false }, (failure, zip) => (failure || !zip ? reject(failure ?? new Error('not a zip')) : resolve(zip))));

/** The entries of a zip in their order, each with a function that opens its raw (gzip) bytes. */
async function* zipEntries(path: string): AsyncGenerator<{ entry: yauzl.Entry; open: () => Promise<Readable> }> {
  const zip = await openZip(path);
  try {
    for (;;) {
      const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
        const cleanup = () => zip.removeAllListeners('entry').removeAllListeners('end').removeAllListeners('error');
        zip.once('entry', (found: yauzl.Entry) => (cleanup(), resolve(found)));
        zip.once('end', () => (cleanup(), resolve(undefined)));
        zip.once('error', (failure: Error) => (cleanup(), reject(failure)));
        zip.readEntry();
      });
      if (!entry) return;
      if (entry.fileName.endsWith('/')) continue;
      yield { entry, open: () => new Promise<Readable>((resolve, reject) => zip.openReadStream(entry, (failure, stream) => (failure || !stream ? reject(failure ?? new Error('no stream')) : resolve(stream)))) };
    }
  } finally {
    zip.close();
  }
}

/** The hour entries of an archive (read from its central directory; fails when it is no zip). */
export async function listHours(path: string): Promise<HourEntry[]> {
  const hours: HourEntry[] = [];
  for await (const { entry } of zipEntries(path)) hours.push({ name: entry.fileName, size: entry.compressedSize });
  return hours;
}

/** An entry's lines, a chunk's worth at a time; `onBytes` hears the gzip bytes read. */
async function* entryLines(raw: Readable, onBytes: (bytes: number) => void): AsyncGenerator<string[]> {
  raw.on('data', (chunk: Buffer) => onBytes(chunk.length));
  // Output chunks of 256 KB, not zlib's 16 KB: fewer thread-pool round trips and string joins a line.
  const gunzip = raw.pipe(createGunzip({ chunkSize: 256 * 1024 }));
  raw.once('error', (failure) => gunzip.destroy(failure));
  gunzip.setEncoding('utf8');
  let rest = '';
  for await (const text of gunzip as AsyncIterable<string>) {
    const lines = (rest + text).split('\n');
    rest = lines.pop()!;
    if (lines.length > 0) yield lines;
  }
  if (rest !== '') yield [rest];
}

/** The hours of an archive, those `wanted` accepts, each with its lines to read before the next hour. */
export async function* archiveHours(path: string, wanted: (name: string) => boolean, onBytes: (bytes: number) => void): AsyncGenerator<{ name: string; lines: AsyncGenerator<string[]> }> {
  for await (const { entry, open } of zipEntries(path)) {
    if (!wanted(entry.fileName)) continue;
    yield { name: entry.fileName, lines: entryLines(await open(), onBytes) };
  }
}
