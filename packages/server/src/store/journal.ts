// Append-only journal in front of the storage engine. A batch is acknowledged once its lines
// are written and fsynced; batches arriving while a write is in flight share the next fsync
// (group commit). Segments are sealed (rotated) and handed to the engine in the background.
// A failed or incomplete write is cut off again (truncated to the last acknowledged byte),
// so that later lines never continue a torn one; where even that fails, the segment takes
// no more writes until it is rotated.
import { mkdirSync, readdirSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
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

const SEGMENT_PATTERN = /^(\d{15})-(\d{6})\.ndjson$/;

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
    private readonly openSegment: OpenSegment = (path) => open(path, 'a'),
  ) {
    mkdirSync(dir, { recursive: true });
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

  async close(): Promise<Segment | undefined> {
    while (this.flushing) await this.flushing;
    await this.handle?.close();
    this.handle = undefined;
    return this.currentBytes > 0 ? this.current : undefined;
  }
}
