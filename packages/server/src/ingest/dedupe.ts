// insert_id deduplication over a sliding window (7 days by default), kept off the JS heap.
// A busy week holds millions of insert_ids; as JS strings in Maps every major GC traced them
// (pauses of 40-100 ms while queries ran). Here each id's UTF-8 bytes live in a ring of
// bytes, its project, time and hash in typed-array rings (oldest first, so pruning drops a
// prefix), and an open-addressing table (linear probing, deletion by backward shift, so no
// tombstones) maps hashes to ring positions. Lookups are exact: a hash match is confirmed
// on the stored bytes.

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

export class InsertIdWindow {
  // The entry ring: entry number n (counted since the start) sits at n & entryMask.
  private entryMask = 1023;
  private hashes = new Uint32Array(1024);
  private appIds = new Int32Array(1024);
  private seconds = new Uint32Array(1024);
  /** Where the entry's bytes start, counted since the start (the ring position is `& byteMask`). */
  private starts = new Float64Array(1024);
  private lengths = new Uint16Array(1024);
  private first = 0;
  private next = 0;
  // The byte ring: an id never wraps around its end (the tail is skipped instead).
  private byteMask = 65535;
  private bytes = Buffer.alloc(65536);
  private firstByte = 0;
  private nextByte = 0;
  // The table: ring position + 1 of an entry, or EMPTY; at most half full.
  private table = new Uint32Array(4096);
  private live = 0;

  constructor(private readonly windowMs: number) {}

  get size(): number {
    return this.live;
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
    if ((start & this.byteMask) + length > this.byteMask + 1) start += this.byteMask + 1 - (start & this.byteMask);
    this.bytes.write(insertId, start & this.byteMask, length, 'utf8');
    this.nextByte = start + length;
    const at = this.next & this.entryMask;
    this.hashes[at] = hash;
    this.appIds[at] = appId;
    this.seconds[at] = Math.floor(receivedAt / 1000);
    this.starts[at] = start;
    this.lengths[at] = length;
    this.next++;
    this.place(at);
    this.live++;
    return true;
  }

  /** Forgets an insert_id (a reservation whose write failed). */
  delete(appId: number, insertId: string): void {
    const slot = this.slotOf(appId, insertId, hashOf(appId, insertId));
    if (slot < 0) return;
    this.appIds[this.table[slot]! - 1] = DEAD;
    this.unplace(slot);
    this.live--;
  }

  /** Drops the ids received before the window. */
  prune(now: number): void {
    const oldest = Math.floor((now - this.windowMs) / 1000);
    while (this.first < this.next) {
      const at = this.first & this.entryMask;
      if (this.seconds[at]! >= oldest) break;
      if (this.appIds[at] !== DEAD) {
        this.unplace(this.slotOfEntry(at));
        this.live--;
      }
      this.first++;
    }
    this.firstByte = this.first < this.next ? this.starts[this.first & this.entryMask]! : this.nextByte;
  }

  private slotOf(appId: number, insertId: string, hash: number): number {
    const mask = this.table.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const value = this.table[slot]!;
      if (value === EMPTY) return -1;
      const at = value - 1;
      if (this.hashes[at] === hash && this.appIds[at] === appId && this.matches(at, insertId)) return slot;
    }
  }

  private matches(at: number, insertId: string): boolean {
    const start = this.starts[at]! & this.byteMask;
    return this.bytes.toString('utf8', start, start + this.lengths[at]!) === insertId;
  }

  private slotOfEntry(at: number): number {
    const mask = this.table.length - 1;
    let slot = this.hashes[at]! & mask;
    while (this.table[slot] !== at + 1) slot = (slot + 1) & mask;
    return slot;
  }

  private place(at: number): void {
    const mask = this.table.length - 1;
    let slot = this.hashes[at]! & mask;
    while (this.table[slot] !== EMPTY) slot = (slot + 1) & mask;
    this.table[slot] = at + 1;
  }

  /** Empties a slot, moving later entries of its probe run back so that no lookup stops short. */
  private unplace(slot: number): void {
    const mask = this.table.length - 1;
    let hole = slot;
    this.table[hole] = EMPTY;
    for (let next = (hole + 1) & mask; this.table[next] !== EMPTY; next = (next + 1) & mask) {
      const home = this.hashes[this.table[next]! - 1]! & mask;
      // The entry may stay when its home lies cyclically in (hole, next].
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      this.table[hole] = this.table[next]!;
      this.table[next] = EMPTY;
      hole = next;
    }
  }

  /** Room for one more entry of `length` bytes (and its tail skip); the table kept at most half full. */
  private reserve(length: number): void {
    if (this.next - this.first > this.entryMask) this.growEntries();
    while (this.nextByte - this.firstByte + 2 * length > this.byteMask) this.growBytes();
    if (2 * (this.live + 1) > this.table.length) this.rebuildTable(this.table.length * 2);
  }

  private growEntries(): void {
    const capacity = (this.entryMask + 1) * 2;
    const mask = capacity - 1;
    const move = <T extends Uint32Array | Int32Array | Float64Array | Uint16Array>(old: T, fresh: T): T => {
      for (let n = this.first; n < this.next; n++) fresh[n & mask] = old[n & this.entryMask]!;
      return fresh;
    };
    this.hashes = move(this.hashes, new Uint32Array(capacity));
    this.appIds = move(this.appIds, new Int32Array(capacity));
    this.seconds = move(this.seconds, new Uint32Array(capacity));
    this.starts = move(this.starts, new Float64Array(capacity));
    this.lengths = move(this.lengths, new Uint16Array(capacity));
    this.entryMask = mask;
    // Ring positions changed: the table is placed anew.
    this.rebuildTable(this.table.length);
  }

  private growBytes(): void {
    const bytes = Buffer.alloc((this.byteMask + 1) * 2);
    const mask = bytes.length - 1;
    for (let n = this.first; n < this.next; n++) {
      const at = n & this.entryMask;
      const start = this.starts[at]!;
      // An id that did not cross the old ring's end does not cross the new one's either.
      this.bytes.copy(bytes, start & mask, start & this.byteMask, (start & this.byteMask) + this.lengths[at]!);
    }
    this.bytes = bytes;
    this.byteMask = mask;
  }

  private rebuildTable(size: number): void {
    this.table = new Uint32Array(size);
    for (let n = this.first; n < this.next; n++) {
      const at = n & this.entryMask;
      if (this.appIds[at] !== DEAD) this.place(at);
    }
  }
}
