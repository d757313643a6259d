// The journal in front of an engine: `append` answers once the lines are fsynced; a
// background loop seals the open segment every `loadIntervalMs` and loads sealed segments
// into the engine in large chunks, then deletes them. A segment that grows past
// `segmentBytes` is sealed at once, also while a load runs: a load holds one segment in
// memory, so a slow load (the engine busy with long queries) must not let the next segment
// grow with the ingestion that arrives meanwhile (a large segment exhausts the loading
// thread's heap); the backlog waits on disk. At start-up,
// segments a crash left behind are loaded unless the engine recorded them as loaded already.
// A segment the engine refuses is split in halves down to the single records it refuses,
// which are quarantined (kept aside, logged): one bad record never holds back the others,
// other projects' or the start-up. A failure while the engine does not answer at all (its
// server down, its process dead) is the engine's, not the records': the segment stays whole
// for the next round.
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { isUnavailable } from '../shared/unavailable.js';
import { journalLine } from './journal-line.js';
import { Journal, type Segment } from './journal.js';
import { eachInSlices, yieldToEventLoop } from '../shared/time-slice.js';
import { type StorePassThroughs, storePassThroughs } from './engine-methods.js';
import type { Engine, JournalRecord, Store } from './types.js';

/** Bytes of a chunk of journal lines (a longer line gets a chunk of its own). */
const CHUNK_BYTES = 1 << 16;
const NEWLINE = 0x0a;

/**
 * The journal lines of the records, encoded a slice at a time. Each line is written into the
 * chunk as it is made (UTF-8 takes at most 3 bytes per UTF-16 code unit): no string of many
 * lines is joined, flattened and converted.
 */
async function journalLines(records: JournalRecord[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  await eachInSlices(records, (record) => {
    const line = journalLine(record);
    const most = 3 * line.length + 1;
    if (used + most > chunk.length) {
      chunks.push(chunk.subarray(0, used));
      chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, most));
      used = 0;
    }
    used += chunk.write(line, used);
    chunk[used++] = NEWLINE;
  });
  chunks.push(chunk.subarray(0, used));
  return Buffer.concat(chunks);
}

export interface JournalOptions {
  loadIntervalMs: number;
  segmentBytes: number;
  /** Operator-facing messages (quarantined records). */
  log: (message: string) => void;
}

/**
 * The engine's methods the store answers as the engine does (after a flush, for reads of what
 * was appended), generated from the ENGINE_METHODS entries with a store answer: merged into
 * the class's type here, assigned by its constructor.
 */
export interface JournalledStore extends StorePassThroughs {}

export class JournalledStore implements Store {
  private readonly journal: Journal;
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> = Promise.resolve();
  private readonly sealed: Segment[] = [];
  private sealing: Promise<void> = Promise.resolve();
  /** A seal of the open segment for its size is under way. */
  private sealingFull = false;
  private closing = false;
  /** The last append: settled once its lines are queued in the journal. */
  private appending: Promise<void> = Promise.resolve();

  private constructor(
    private readonly engine: Engine,
    dataDir: string,
    private readonly options: JournalOptions,
  ) {
    this.journal = new Journal(join(dataDir, 'journal'));
    Object.assign(this, storePassThroughs(engine, () => this.flush()));
  }

  static async open(engine: Engine, dataDir: string, options: JournalOptions): Promise<JournalledStore> {
    const store = new JournalledStore(engine, dataDir, options);
    for (const segment of store.journal.existingSegments()) await store.loadIsolating(segment);
    await store.journal.openNewSegment();
    store.timer = setInterval(() => void store.loadInBackground(), options.loadIntervalMs);
    store.timer.unref();
    return store;
  }

  get reader(): Engine {
    return this.engine;
  }

  get entities(): Engine {
    return this.engine;
  }

  private async loadAndDelete(segment: Segment): Promise<void> {
    if (!(await this.engine.isLoaded(segment.name))) await this.engine.loadSegment(segment.path, segment.name);
    await unlink(segment.path);
  }

  /** Loads a sealed segment, isolating and quarantining the records the engine refuses. */
  private async loadIsolating(segment: Segment): Promise<void> {
    await this.journal.trimTornTail(segment);
    const pending = [segment];
    while (pending.length > 0) {
      const next = pending.shift()!;
      try {
        await this.loadAndDelete(next);
      } catch (error) {
        // Storage that did not answer (a ClickHouse shard down while the first answers) refused no record.
        if (isUnavailable(error) || !(await this.engineAnswers(next))) throw error;
        const halves = await this.journal.split(next);
        if (halves) {
          pending.unshift(...halves);
          continue;
        }
        const kept = await this.journal.quarantine(next);
        this.options.log(`quarantined a journal record the store refused (${(error as Error).message.split('\n')[0]}); kept in ${kept}, the other records load as usual`);
      }
    }
  }

  /** Whether the engine answers a question about the segment (after a failed load of it). */
  private engineAnswers(segment: Segment): Promise<boolean> {
    return this.engine.isLoaded(segment.name).then(
      () => true,
      () => false,
    );
  }

  /** Seals the open segment (when it holds anything) behind the sealed ones. */
  private seal(): Promise<void> {
    const sealed = this.sealing.then(async () => {
      const segment = await this.journal.rotate();
      if (segment) this.sealed.push(segment);
    });
    this.sealing = sealed.catch(() => undefined);
    return sealed;
  }

  /** Seals the open segment and loads every sealed one, one load at a time. */
  private loadInBackground(): Promise<void> {
    return this.afterLoads(async () => {
      try {
        await this.seal();
      } catch (error) {
        this.options.log(`sealing the open journal segment failed, the sealed ones load: ${(error as Error).message}`);
      }
      await this.loadSealed();
    });
  }

  private afterLoads(work: () => Promise<void>): Promise<void> {
    this.loading = this.loading.then(work);
    return this.loading;
  }

  private async loadSealed(): Promise<void> {
    while (this.sealed.length > 0) {
      try {
        await this.loadIsolating(this.sealed[0]!);
        this.sealed.shift();
      } catch (error) {
        // The journal itself (disk) or the engine failed: the segment stays for the next round.
        this.options.log(`loading journal segment ${this.sealed[0]!.name} failed, kept for the next try: ${(error as Error).message}`);
        return;
      }
    }
  }

  /**
   * Journals the records after those of earlier calls, whose lines may still be encoding:
   * encoding starts on a turn of the event loop of its own (the caller's has run its work)
   * and yields between slices.
   */
  async append(records: JournalRecord[]): Promise<void> {
    const queued = this.appending.then(async () => {
      await yieldToEventLoop();
      return { written: this.journal.append(await journalLines(records)) };
    });
    this.appending = queued.then(
      () => undefined,
      () => undefined,
    );
    try {
      await (await queued).written;
    } finally {
      if ((this.journal.openBytes >= this.options.segmentBytes || this.journal.needsRotation) && !this.sealingFull) void this.sealFull();
    }
  }

  /** Seals the open segment now, then loads it after the sealed ones (behind a load under way). */
  private async sealFull(): Promise<void> {
    this.sealingFull = true;
    try {
      await this.seal();
    } catch (error) {
      this.options.log(`sealing a full journal segment failed, it is sealed with the next round: ${(error as Error).message}`);
    } finally {
      this.sealingFull = false;
    }
    if (!this.closing) void this.afterLoads(() => this.loadSealed());
  }

  flush(): Promise<void> {
    return this.loadInBackground();
  }

  // Not in ENGINE_METHODS: the engine's process builds it on `queryChunks`.
  query(sql: string): Promise<Record<string, unknown>[]> {
    return this.engine.query(sql);
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    await this.appending;
    await this.sealing;
    await this.loading;
    const last = await this.journal.close();
    if (last) await this.loadIsolating(last);
    await this.engine.close();
  }
}
