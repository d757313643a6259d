// insert_id deduplication over a sliding window (7 days by default), kept off the JS heap.
// A busy week holds millions of insert_ids; as JS strings in Maps every major GC traced them
// (pauses of 40-100 ms while queries ran). Here each id's UTF-8 bytes live in a ring of
// bytes, its project, time and hash in typed-array rings (oldest first, so pruning drops a
// prefix), and an open-addressing table (linear probing, deletion by backward shift, so no
// tombstones) maps hashes to entry numbers. Lookups are exact: a hash match is confirmed on
// the stored bytes. Growing never stops the event loop for long: the rings grow by block
// copies, and a doubled table is filled a slice at a time while the old one still answers.

const EMPTY = 0;
/** A deleted entry, left in the ring until pruning reaches it. */
const DEAD = -1;

/** FNV-1a over the UTF-16 code units and the project, finished with murmur3's mixer. */
function hashOf(appId: number, insertId: string): number {
  let h = Math.imul(0x811c9dc5 ^ appId, 0x01000193);
  for (let i = 0; i < insertId.length; i++) h = Math.imul(h ^ insertId.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Entries placed into a doubling table per turn of the event loop. */
const GROWTH_SLICE = 32_768;

type Ring = Uint32Array | Int32Array | Float64Array | Uint16Array | Buffer;

/** Copies the ring items numbered [from, to) into a larger ring, in contiguous blocks. */
function copyRing<T extends Ring>(old: T, fresh: T, from: number, to: number): T {
  for (let n = from; n < to; ) {
    const source = n % old.length;
    const target = n % fresh.length;
    const count = Math.min(to - n, old.length - source, fresh.length - target);
    fresh.set(old.subarray(source, source + count), target);
    n += count;
  }
  return fresh;
}

/** A table being filled: entries numbered below `cursor` or from `end` on are in it. */
interface Growth {
  table: Float64Array;
  cursor: number;
  end: number;
}

export class InsertIdWindow {
  // The entry ring: entry number n (counted since the start) sits at n % capacity.
  private hashes: Uint32Array = new Uint32Array(1024);
  private appIds: Int32Array = new Int32Array(1024);
  private seconds: Uint32Array = new Uint32Array(1024);
  /** Where the entry's bytes start, counted since the start (the ring position is `% bytes.length`). */
  private starts: Float64Array = new Float64Array(1024);
  private lengths: Uint16Array = new Uint16Array(1024);
  private first = 0;
  private next = 0;
  // The byte ring: an id never wraps around its end (the tail is skipped instead).
  private bytes: Buffer = Buffer.alloc(65536);
  private firstByte = 0;
  private nextByte = 0;
  // The table: entry number + 1, or EMPTY; doubled once half full.
  private table: Float64Array = new Float64Array(4096);
  private growth: Growth | undefined;
  private live = 0;

  constructor(private readonly windowMs: number) {}

  get size(): number {
    return this.live;
  }

  /** Makes room for `entries` more ids of `bytes` bytes in all at once (a refill at start-up). */
  presize(entries: number, bytes: number): void {
    this.finishGrowth();
    while (this.hashes.length < this.next - this.first + entries) this.growEntries();
    while (this.bytes.length < this.nextByte - this.firstByte + 2 * bytes) this.growBytes();
    let size = this.table.length;
    while (size < 2 * (this.live + entries)) size *= 2;
    if (size > this.table.length) this.table = this.filledTable(size, this.first, this.next);
  }

  has(appId: number, insertId: string): boolean {
    return this.slotOf(appId, insertId, hashOf(appId, insertId)) >= 0;
  }

  /** Records an insert_id received at `receivedAt` (ms); false when it is already there. */
  add(appId: number, insertId: string, receivedAt: number): boolean {
    const hash = hashOf(appId, insertId);
    if (this.slotOf(appId, insertId, hash) >= 0) return false;
    const length = Buffer.byteLength(insertId);
    this.reserve(length);
    let start = this.nextByte;
    const capacity = this.bytes.length;
    if ((start % capacity) + length > capacity) start += capacity - (start % capacity);
    this.bytes.write(insertId, start % capacity, length, 'utf8');
    this.nextByte = start + length;
    const n = this.next++;
    const at = n % this.hashes.length;
    this.hashes[at] = hash;
    this.appIds[at] = appId;
    this.seconds[at] = Math.floor(receivedAt / 1000);
    this.starts[at] = start;
    this.lengths[at] = length;
    this.place(this.table, n);
    if (this.growth) this.place(this.growth.table, n);
    this.live++;
    return true;
  }

  /** Forgets an insert_id (a reservation whose write failed). */
  delete(appId: number, insertId: string): void {
    const slot = this.slotOf(appId, insertId, hashOf(appId, insertId));
    if (slot < 0) return;
    const n = this.table[slot]! - 1;
    this.forget(n, slot);
    this.appIds[n % this.appIds.length] = DEAD;
  }

  /** Drops the ids received before the window. */
  prune(now: number): void {
    const oldest = Math.floor((now - this.windowMs) / 1000);
    while (this.first < this.next) {
      const at = this.first % this.hashes.length;
      if (this.seconds[at]! >= oldest) break;
      if (this.appIds[at] !== DEAD) this.forget(this.first, this.slotOfEntry(this.table, this.first));
      this.first++;
    }
    this.firstByte = this.first < this.next ? this.starts[this.first % this.starts.length]! : this.nextByte;
  }

  /** Takes a live entry out of the table (and out of a table being filled, if it is there). */
  private forget(n: number, slot: number): void {
    this.unplace(this.table, slot);
    const growth = this.growth;
    if (growth && (n < growth.cursor || n >= growth.end)) this.unplace(growth.table, this.slotOfEntry(growth.table, n));
    this.live--;
  }

  private slotOf(appId: number, insertId: string, hash: number): number {
    const table = this.table;
    const mask = table.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const value = table[slot]!;
      if (value === EMPTY) return -1;
      const at = (value - 1) % this.hashes.length;
      if (this.hashes[at] === hash && this.appIds[at] === appId && this.matches(at, insertId)) return slot;
    }
  }

  private matches(at: number, insertId: string): boolean {
    const start = this.starts[at]! % this.bytes.length;
    return this.bytes.toString('utf8', start, start + this.lengths[at]!) === insertId;
  }

  private slotOfEntry(table: Float64Array, n: number): number {
    const mask = table.length - 1;
    let slot = this.hashes[n % this.hashes.length]! & mask;
    while (table[slot] !== n + 1) slot = (slot + 1) & mask;
    return slot;
  }

  private place(table: Float64Array, n: number): void {
    const mask = table.length - 1;
    let slot = this.hashes[n % this.hashes.length]! & mask;
    while (table[slot] !== EMPTY) slot = (slot + 1) & mask;
    table[slot] = n + 1;
  }

  /** Empties a slot, moving later entries of its probe run back so that no lookup stops short. */
  private unplace(table: Float64Array, slot: number): void {
    const mask = table.length - 1;
    let hole = slot;
    table[hole] = EMPTY;
    for (let next = (hole + 1) & mask; table[next] !== EMPTY; next = (next + 1) & mask) {
      const home = this.hashes[(table[next]! - 1) % this.hashes.length]! & mask;
      // The entry may stay when its home lies cyclically in (hole, next].
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      table[hole] = table[next]!;
      table[next] = EMPTY;
      hole = next;
    }
  }

  /** Room for one more entry of `length` bytes (and its tail skip). */
  private reserve(length: number): void {
    if (this.next - this.first >= this.hashes.length) this.growEntries();
    while (this.nextByte - this.firstByte + 2 * length >= this.bytes.length) this.growBytes();
    if (this.growth && 4 * (this.live + 1) > 3 * this.table.length) this.finishGrowth();
    if (!this.growth && 2 * (this.live + 1) > this.table.length) this.startGrowth();
  }

  private growEntries(): void {
    const capacity = this.hashes.length * 2;
    this.hashes = copyRing(this.hashes, new Uint32Array(capacity), this.first, this.next);
    this.appIds = copyRing(this.appIds, new Int32Array(capacity), this.first, this.next);
    this.seconds = copyRing(this.seconds, new Uint32Array(capacity), this.first, this.next);
    this.starts = copyRing(this.starts, new Float64Array(capacity), this.first, this.next);
    this.lengths = copyRing(this.lengths, new Uint16Array(capacity), this.first, this.next);
  }

  private growBytes(): void {
    this.bytes = copyRing(this.bytes, Buffer.alloc(this.bytes.length * 2), this.firstByte, this.nextByte);
  }

  /** A table of `size` slots with the live entries numbered [from, to). */
  private filledTable(size: number, from: number, to: number): Float64Array {
    const table = new Float64Array(size);
    for (let n = from; n < to; n++) if (this.appIds[n % this.appIds.length] !== DEAD) this.place(table, n);
    return table;
  }

  /** Starts filling a table twice as large, a slice per turn of the event loop. */
  private startGrowth(): void {
    const growth: Growth = { table: new Float64Array(this.table.length * 2), cursor: this.first, end: this.next };
    this.growth = growth;
    const slice = () => {
      if (this.growth !== growth) return;
      this.fillGrowth(growth, GROWTH_SLICE);
      if (this.growth === growth) setImmediate(slice);
    };
    setImmediate(slice);
  }

  private fillGrowth(growth: Growth, count: number): void {
    growth.cursor = Math.max(growth.cursor, this.first);
    const until = Math.min(growth.end, growth.cursor + count);
    for (let n = growth.cursor; n < until; n++) if (this.appIds[n % this.appIds.length] !== DEAD) this.place(growth.table, n);
    growth.cursor = until;
    if (growth.cursor < growth.end) return;
    this.table = growth.table;
    this.growth = undefined;
  }

  private finishGrowth(): void {
    if (this.growth) this.fillGrowth(this.growth, Infinity);
  }
}
