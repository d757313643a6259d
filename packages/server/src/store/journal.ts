// Append-only journal in front of the storage engine. A batch is acknowledged once its lines
// are written and fsynced; batches arriving while a write is in flight share the next fsync
// (group commit). Segments are sealed (rotated) and handed to the engine in the background.
// A failed or incomplete write is cut off again (truncated to the last acknowledged byte),
// so that later lines never continue a torn one; where even that fails, the segment takes
// no more writes until it is rotated.
import { mkdirSync, readdirSync } from 'node:fs';
import { open, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

interface PendingWrite {
  data: Buffer;
  resolve: () => void;
  reject: (error: Error) => void;
}

export interface Segment {
  name: string;
  path: string;
}

/** `<stamp>-<sequence>.ndjson`; halves of a split segment add `.0` / `.1` before `.ndjson`. */
const SEGMENT_PATTERN = /^\d{15}-\d{6}(?:\.[01])*\.ndjson$/;
const NEWLINE = 0x0a;
const TAIL_CHUNK_BYTES = 64 * 1024;

/**
 * Where the file's last whole line ends (0: none), read from the end back a chunk at a time:
 * reading a whole segment (tens of MB) at every load made garbage for the HTTP thread.
 */
async function lastLineEnd(handle: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(Math.min(TAIL_CHUNK_BYTES, size));
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - chunk.length);
    const { bytesRead } = await handle.read(chunk, 0, end - start, start);
    const at = chunk.subarray(0, bytesRead).lastIndexOf(NEWLINE);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

async function writeDurably(path: string, data: Buffer): Promise<void> {
  const handle = await open(path, 'w', 0o600);
  try {
    await handle.writeFile(data);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/** Opens a segment file for appending (tests pass one that fails). */
export type OpenSegment = (path: string) => Promise<FileHandle>;

export class Journal {
  private handle: FileHandle | undefined;
  /** The open segment has a torn tail that could not be cut off: it must be rotated. */
  private torn = false;
  private current: Segment | undefined;
  private currentBytes = 0;
  private pending: PendingWrite[] = [];
  private flushing: Promise<void> | undefined;
  private writing: Promise<void> | undefined;
  private sequence = 0;
  private lastStamp = 0;

  constructor(
    readonly dir: string,
    private readonly openSegment: OpenSegment = (path) => open(path, 'a', 0o600),
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** Whether the open segment must be rotated before it takes writes again. */
  get needsRotation(): boolean {
    return this.torn;
  }

  /** Segments left on disk, oldest first (a previous run's, at start-up). */
  existingSegments(): Segment[] {
    return readdirSync(this.dir)
      .filter((name) => SEGMENT_PATTERN.test(name))
      .sort()
      .map((name) => ({ name, path: join(this.dir, name) }));
  }

  /** Bytes written to the open segment. */
  get openBytes(): number {
    return this.currentBytes;
  }

  async openNewSegment(): Promise<void> {
    // Names sort in creation order and never repeat, also across restarts (time-stamped).
    this.lastStamp = Math.max(Date.now(), this.lastStamp + 1);
    const name = `${String(this.lastStamp).padStart(15, '0')}-${String(this.sequence++ % 1e6).padStart(6, '0')}.ndjson`;
    const path = join(this.dir, name);
    const handle = await this.openSegment(path);
    // Swapped together, synchronously: a write never sees one without the other.
    this.current = { name, path };
    this.handle = handle;
    this.currentBytes = 0;
    this.torn = false;
  }

  /** Resolves when `data` is on disk. */
  append(data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ data, resolve, reject });
      if (!this.flushing) this.flushing = this.flushLoop();
    });
  }

  private async flushLoop(): Promise<void> {
    // Let every request handled in this tick queue its lines first.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      this.writing = this.write(this.handle!, batch);
      await this.writing;
    }
    this.flushing = undefined;
  }

  private async write(handle: FileHandle, batch: PendingWrite[]): Promise<void> {
    // Writes are serial: the segment holds exactly the acknowledged bytes before this one.
    const acknowledged = this.currentBytes;
    try {
      if (this.torn) throw new Error('journal segment has a torn tail; it is rotated before the next write');
      // One gathered write: the buffers are not copied into one first.
      const buffers = batch.map((w) => w.data);
      let bytes = 0;
      for (const buffer of buffers) bytes += buffer.length;
      const { bytesWritten } = await handle.writev(buffers);
      if (bytesWritten !== bytes) throw new Error(`journal write incomplete: ${bytesWritten} of ${bytes} bytes`);
      await handle.datasync();
      if (handle === this.handle) this.currentBytes += bytes;
      for (const w of batch) w.resolve();
    } catch (error) {
      if (!this.torn) await this.cutOff(handle, acknowledged);
      for (const w of batch) w.reject(error as Error);
    }
  }

  private async cutOff(handle: FileHandle, size: number): Promise<void> {
    try {
      await handle.truncate(size);
      await handle.datasync();
    } catch {
      if (handle === this.handle) this.torn = true;
    }
  }

  /**
   * Seals the open segment and opens a new one; returns the sealed segment once the last
   * write into it is on disk (nothing when it is empty).
   */
  async rotate(): Promise<Segment | undefined> {
    if (this.currentBytes === 0 && !this.flushing && !this.torn) return undefined;
    const sealed = this.current;
    const sealedHandle = this.handle;
    await this.openNewSegment();
    // Writes started from now on go to the new segment; wait for one still on the old.
    await this.writing;
    await sealedHandle?.close();
    return sealed;
  }

  /**
   * Cuts a sealed segment back to its last complete line: bytes after it belong to a write
   * that a crash interrupted, which was never acknowledged.
   */
  async trimTornTail(segment: Segment): Promise<void> {
    const handle = await open(segment.path, 'r+');
    try {
      const size = (await handle.stat()).size;
      const lineEnd = await lastLineEnd(handle, size);
      if (lineEnd === size) return;
      await handle.truncate(lineEnd);
      await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  /**
   * Splits a sealed segment into two halves by lines (named so that they sort where it
   * stood) and removes it; undefined when it holds a single line. The halves are on disk
   * before the original goes: a crash in between leaves the same lines twice, never zero
   * times, and the original is split again at the next start.
   */
  async split(segment: Segment): Promise<[Segment, Segment] | undefined> {
    const data = await readFile(segment.path);
    const lineEnds: number[] = [];
    for (let at = data.indexOf(NEWLINE); at >= 0; at = data.indexOf(NEWLINE, at + 1)) lineEnds.push(at + 1);
    if (lineEnds.length < 2) return undefined;
    const middle = lineEnds[Math.floor(lineEnds.length / 2) - 1]!;
    const base = segment.name.slice(0, -'.ndjson'.length);
    const halves = [data.subarray(0, middle), data.subarray(middle)].map((part, index) => ({ part, name: `${base}.${index}.ndjson` }));
    for (const { part, name } of halves) await writeDurably(join(this.dir, name), part);
    await unlink(segment.path);
    return [halves[0]!, halves[1]!].map(({ name }) => ({ name, path: join(this.dir, name) })) as [Segment, Segment];
  }

  /** Moves a segment out of the load path into `quarantine/`, where it is kept; returns its new path. */
  async quarantine(segment: Segment): Promise<string> {
    const dir = join(this.dir, 'quarantine');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const target = join(dir, segment.name);
    await rename(segment.path, target);
    return target;
  }

  async close(): Promise<Segment | undefined> {
    while (this.flushing) await this.flushing;
    await this.handle?.close();
    this.handle = undefined;
    return this.currentBytes > 0 ? this.current : undefined;
  }
}
