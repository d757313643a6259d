// insert_id deduplication over a sliding window (7 days by default), kept off the JS heap.
// A busy week holds millions of insert_ids; as JS strings in Maps every major GC traced them
// (pauses of 40-100 ms while queries ran). Here each id's UTF-8 bytes live in blocks of bytes,
// its project, time and hash in blocks of typed arrays (oldest first, so pruning drops whole
// blocks), and open-addressing tables (linear probing, deletion by backward shift, so no
// tombstones) map hashes to entry numbers. Lookups are exact: a hash match is confirmed on
// the stored bytes. Growing never stops the event loop for long: storage grows a block at a
// time and is never copied, and the table is 4096 shards by the hash's top bits, each doubled
// on its own from its own slots, which keep the hashes (one table of 16 million entries took
// 2 s to double, in one turn).

const EMPTY = 0;
/** A deleted entry, left in its block until pruning reaches it. */
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

/** Entries per block (a power of two). */
const ENTRY_BITS = 16;
const ENTRIES_PER_BLOCK = 1 << ENTRY_BITS;
const ENTRY_MASK = ENTRIES_PER_BLOCK - 1;
/** Bytes per block: an id never spans two (ids are at most 65,535 bytes: their length is a Uint16). */
const BYTES_PER_BLOCK = 1 << 20;

/** Entries numbered [number * ENTRIES_PER_BLOCK, (number + 1) * ENTRIES_PER_BLOCK). */
class EntryBlock {
  readonly hashes = new Uint32Array(ENTRIES_PER_BLOCK);
  readonly appIds = new Int32Array(ENTRIES_PER_BLOCK);
  readonly seconds = new Uint32Array(ENTRIES_PER_BLOCK);
  /** Where the entry's bytes start, counted since the start. */
  readonly starts = new Float64Array(ENTRIES_PER_BLOCK);
  readonly lengths = new Uint16Array(ENTRIES_PER_BLOCK);
}

/** A shard of the table: slots of entry number + 1 (or EMPTY) with the entry's hash beside it. */
interface Shard {
  entries: Float64Array;
  hashes: Uint32Array;
  size: number;
}

const emptyShard = (slots: number): Shard => ({ entries: new Float64Array(slots), hashes: new Uint32Array(slots), size: 0 });

/** The table's shards: by the top bits of the hash (the slot within a shard takes the low bits). */
const SHARD_BITS = 12;
const SHARD_SHIFT = 32 - SHARD_BITS;
const INITIAL_SHARD_SLOTS = 64;

export class InsertIdWindow {
  // Entry number n (counted since the start) sits in entryBlocks[(n >> ENTRY_BITS) - firstEntryBlock].
  private entryBlocks: EntryBlock[] = [];
  private firstEntryBlock = 0;
  private first = 0;
  private next = 0;
  // Byte position p (counted since the start) sits in byteBlocks[floor(p / BYTES_PER_BLOCK) - firstByteBlock].
  private byteBlocks: Buffer[] = [];
  private firstByteBlock = 0;
  private nextByte = 0;
  // A shard doubles once half full.
  private readonly shards: Shard[] = Array.from({ length: 1 << SHARD_BITS }, () => emptyShard(INITIAL_SHARD_SLOTS));
  private live = 0;

  constructor(private readonly windowMs: number) {}

  get size(): number {
    return this.live;
  }

  has(appId: number, insertId: string): boolean {
    const hash = hashOf(appId, insertId);
    return this.slotOf(this.shards[hash >>> SHARD_SHIFT]!, appId, insertId, hash) >= 0;
  }

  /** Records an insert_id received at `receivedAt` (ms); false when it is already there. */
  add(appId: number, insertId: string, receivedAt: number): boolean {
    const hash = hashOf(appId, insertId);
    const shard = hash >>> SHARD_SHIFT;
    if (this.slotOf(this.shards[shard]!, appId, insertId, hash) >= 0) return false;
    const length = Buffer.byteLength(insertId);
    let start = this.nextByte;
    if ((start % BYTES_PER_BLOCK) + length > BYTES_PER_BLOCK) start += BYTES_PER_BLOCK - (start % BYTES_PER_BLOCK);
    const blockNumber = Math.floor(start / BYTES_PER_BLOCK);
    while (this.firstByteBlock + this.byteBlocks.length <= blockNumber) this.byteBlocks.push(Buffer.allocUnsafe(BYTES_PER_BLOCK));
    this.byteBlocks[blockNumber - this.firstByteBlock]!.write(insertId, start % BYTES_PER_BLOCK, length, 'utf8');
    this.nextByte = start + length;
    const n = this.next++;
    if ((n & ENTRY_MASK) === 0) this.entryBlocks.push(new EntryBlock());
    const block = this.entryBlock(n);
    const at = n & ENTRY_MASK;
    block.hashes[at] = hash;
    block.appIds[at] = appId;
    block.seconds[at] = Math.floor(receivedAt / 1000);
    block.starts[at] = start;
    block.lengths[at] = length;
    if (2 * (this.shards[shard]!.size + 1) > this.shards[shard]!.entries.length) this.shards[shard] = this.doubled(this.shards[shard]!);
    this.place(this.shards[shard]!, n, hash);
    this.live++;
    return true;
  }

  /** Forgets an insert_id (a reservation whose write failed). */
  delete(appId: number, insertId: string): void {
    const hash = hashOf(appId, insertId);
    const shard = this.shards[hash >>> SHARD_SHIFT]!;
    const slot = this.slotOf(shard, appId, insertId, hash);
    if (slot < 0) return;
    const n = shard.entries[slot]! - 1;
    this.forget(n, slot);
    this.entryBlock(n).appIds[n & ENTRY_MASK] = DEAD;
  }

  /** Drops the ids received before the window. */
  prune(now: number): void {
    const oldest = Math.floor((now - this.windowMs) / 1000);
    while (this.first < this.next) {
      const block = this.entryBlock(this.first);
      const at = this.first & ENTRY_MASK;
      if (block.seconds[at]! >= oldest) break;
      if (block.appIds[at] !== DEAD) this.forget(this.first, this.slotOfEntry(this.first));
      this.first++;
    }
    const firstEntryBlock = this.first >> ENTRY_BITS;
    this.entryBlocks.splice(0, firstEntryBlock - this.firstEntryBlock);
    this.firstEntryBlock = firstEntryBlock;
    const firstByte = this.first < this.next ? this.entryBlock(this.first).starts[this.first & ENTRY_MASK]! : this.nextByte;
    const firstByteBlock = Math.floor(firstByte / BYTES_PER_BLOCK);
    this.byteBlocks.splice(0, firstByteBlock - this.firstByteBlock);
    this.firstByteBlock = firstByteBlock;
  }

  private entryBlock(n: number): EntryBlock {
    return this.entryBlocks[(n >> ENTRY_BITS) - this.firstEntryBlock]!;
  }

  private hashOfEntry(n: number): number {
    return this.entryBlock(n).hashes[n & ENTRY_MASK]!;
  }

  /** Takes a live entry, at `slot` of its shard, out of the table. */
  private forget(n: number, slot: number): void {
    this.unplace(this.shards[this.hashOfEntry(n) >>> SHARD_SHIFT]!, slot);
    this.live--;
  }

  private slotOf(shard: Shard, appId: number, insertId: string, hash: number): number {
    const { entries, hashes } = shard;
    const mask = entries.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const value = entries[slot]!;
      if (value === EMPTY) return -1;
      if (hashes[slot] !== hash) continue;
      const n = value - 1;
      const block = this.entryBlock(n);
      const at = n & ENTRY_MASK;
      if (block.appIds[at] === appId && this.matches(block.starts[at]!, block.lengths[at]!, insertId)) return slot;
    }
  }

  private matches(start: number, length: number, insertId: string): boolean {
    const offset = start % BYTES_PER_BLOCK;
    return this.byteBlocks[Math.floor(start / BYTES_PER_BLOCK) - this.firstByteBlock]!.toString('utf8', offset, offset + length) === insertId;
  }

  /** The slot of a live entry in its shard. */
  private slotOfEntry(n: number): number {
    const hash = this.hashOfEntry(n);
    const { entries } = this.shards[hash >>> SHARD_SHIFT]!;
    const mask = entries.length - 1;
    let slot = hash & mask;
    while (entries[slot] !== n + 1) slot = (slot + 1) & mask;
    return slot;
  }

  private place(shard: Shard, n: number, hash: number): void {
    const { entries, hashes } = shard;
    const mask = entries.length - 1;
    let slot = hash & mask;
    while (entries[slot] !== EMPTY) slot = (slot + 1) & mask;
    entries[slot] = n + 1;
    hashes[slot] = hash;
    shard.size++;
  }

  /** Empties a slot, moving later entries of its probe run back so that no lookup stops short. */
  private unplace(shard: Shard, slot: number): void {
    const { entries, hashes } = shard;
    const mask = entries.length - 1;
    let hole = slot;
    entries[hole] = EMPTY;
    for (let next = (hole + 1) & mask; entries[next] !== EMPTY; next = (next + 1) & mask) {
      const home = hashes[next]! & mask;
      // The entry may stay when its home lies cyclically in (hole, next].
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      entries[hole] = entries[next]!;
      hashes[hole] = hashes[next]!;
      entries[next] = EMPTY;
      hole = next;
    }
    shard.size--;
  }

  /** A shard twice as large with the entries of `shard`. */
  private doubled(shard: Shard): Shard {
    const grown = emptyShard(shard.entries.length * 2);
    for (let slot = 0; slot < shard.entries.length; slot++) if (shard.entries[slot] !== EMPTY) this.place(grown, shard.entries[slot]! - 1, shard.hashes[slot]!);
    return grown;
  }
}
