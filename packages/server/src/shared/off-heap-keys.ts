// Keys (a project and a string) kept off the JS heap, with numeric values beside them: the
// sets and maps of millions of ids (insert_ids, user and device ids) that, as JS strings in
// Maps, every major GC traced, pausing the server. Each key's UTF-8 bytes live in blocks of bytes, its project, hash
// and values in blocks of typed arrays (entry numbers only grow, so dropping the oldest entries
// frees whole blocks), and open-addressing tables (linear probing, deletion by backward shift,
// so no tombstones) map hashes to entry numbers. Lookups are exact: a hash match is confirmed
// on the stored bytes. Growing never stops the event loop for long: storage grows a block at a
// time and is never copied, and the table is 4096 shards by the hash's top bits, each doubled
// on its own from its own slots, which keep the hashes (one large table doubled in one turn
// held the event loop for seconds).

const EMPTY = 0;
/** The project of a removed entry, left in its block until it is dropped. */
const DEAD = -1;

/** FNV-1a over the UTF-16 code units and the project, finished with murmur3's mixer. */
function hashOf(appId: number, key: string): number {
  let h = Math.imul(0x811c9dc5 ^ appId, 0x01000193);
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
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
/** Bytes per block: a key never spans two (keys are at most 65,535 bytes: their length is a Uint16). */
const BYTES_PER_BLOCK = 1 << 20;
const MAX_KEY_BYTES = 0xffff;

/** Entries numbered [number * ENTRIES_PER_BLOCK, (number + 1) * ENTRIES_PER_BLOCK). */
class EntryBlock {
  readonly hashes = new Uint32Array(ENTRIES_PER_BLOCK);
  readonly appIds = new Int32Array(ENTRIES_PER_BLOCK);
  /** Where the key's bytes start, counted since the start. */
  readonly starts = new Float64Array(ENTRIES_PER_BLOCK);
  readonly lengths = new Uint16Array(ENTRIES_PER_BLOCK);
  readonly values: Float64Array;

  constructor(columns: number) {
    this.values = new Float64Array(ENTRIES_PER_BLOCK * columns);
  }
}

/**
 * A shard of the table: slot i is entry number + 1 (or EMPTY) at 2i and the entry's hash at
 * 2i + 1, side by side in one array: a probe reads one place (an object holding an array of
 * each made a lookup wait on memory several times).
 */
type Shard = Float64Array;

const emptyShard = (slots: number): Shard => new Float64Array(2 * slots);
const slotsOf = (shard: Shard) => shard.length >> 1;

/** The table's shards: by the top bits of the hash (the slot within a shard takes the low bits). */
const SHARD_BITS = 12;
const SHARD_SHIFT = 32 - SHARD_BITS;
const INITIAL_SHARD_SLOTS = 64;

/** Keys numbered in the order they were added, each with `columns` numeric values (0 at first). */
export class OffHeapKeys {
  // Entry number n sits in entryBlocks[(n >> ENTRY_BITS) - firstEntryBlock].
  private entryBlocks: EntryBlock[] = [];
  private firstEntryBlock = 0;
  private firstEntry = 0;
  private nextEntry = 0;
  // Byte position p sits in byteBlocks[floor(p / BYTES_PER_BLOCK) - firstByteBlock].
  private byteBlocks: Buffer[] = [];
  private firstByteBlock = 0;
  private nextByte = 0;
  // A shard doubles once half full.
  private readonly shards: Shard[] = Array.from({ length: 1 << SHARD_BITS }, () => emptyShard(INITIAL_SHARD_SLOTS));
  private readonly shardSizes = new Int32Array(1 << SHARD_BITS);
  private live = 0;

  constructor(private readonly columns: number) {}

  /** Keys in the table. */
  get size(): number {
    return this.live;
  }

  /** The entries kept are numbered [first, end); some of them may be removed. */
  get first(): number {
    return this.firstEntry;
  }

  get end(): number {
    return this.nextEntry;
  }

  /** The entry number of a key, or -1. */
  find(appId: number, key: string): number {
    const hash = hashOf(appId, key);
    const shard = this.shards[hash >>> SHARD_SHIFT]!;
    const slot = this.slotOf(shard, appId, key, hash);
    return slot < 0 ? -1 : shard[2 * slot]! - 1;
  }

  /** Adds a key that is not there (`find` said -1); its values start at 0. */
  add(appId: number, key: string): number {
    return this.insert(appId, key, hashOf(appId, key));
  }

  /** Adds a key unless it is there: its entry number, or -1 when it was there (hashed once for both). */
  addIfAbsent(appId: number, key: string): number {
    const hash = hashOf(appId, key);
    if (this.slotOf(this.shards[hash >>> SHARD_SHIFT]!, appId, key, hash) >= 0) return -1;
    return this.insert(appId, key, hash);
  }

  private insert(appId: number, key: string, hash: number): number {
    const length = Buffer.byteLength(key);
    if (length > MAX_KEY_BYTES) throw new RangeError(`Key longer than ${MAX_KEY_BYTES} bytes`);
    let start = this.nextByte;
    if ((start % BYTES_PER_BLOCK) + length > BYTES_PER_BLOCK) start += BYTES_PER_BLOCK - (start % BYTES_PER_BLOCK);
    const blockNumber = Math.floor(start / BYTES_PER_BLOCK);
    while (this.firstByteBlock + this.byteBlocks.length <= blockNumber) this.byteBlocks.push(Buffer.allocUnsafe(BYTES_PER_BLOCK));
    this.byteBlocks[blockNumber - this.firstByteBlock]!.write(key, start % BYTES_PER_BLOCK, length, 'utf8');
    this.nextByte = start + length;
    const n = this.nextEntry++;
    if ((n & ENTRY_MASK) === 0) this.entryBlocks.push(new EntryBlock(this.columns));
    const block = this.entryBlock(n);
    const at = n & ENTRY_MASK;
    block.hashes[at] = hash;
    block.appIds[at] = appId;
    block.starts[at] = start;
    block.lengths[at] = length;
    const shard = hash >>> SHARD_SHIFT;
    if (2 * (this.shardSizes[shard]! + 1) > slotsOf(this.shards[shard]!)) this.shards[shard] = this.doubled(this.shards[shard]!);
    this.place(this.shards[shard]!, n, hash);
    this.shardSizes[shard]!++;
    this.live++;
    return n;
  }

  /** Takes a key out (its entry stays, removed, until dropped). */
  remove(n: number): void {
    const hash = this.hashOfEntry(n);
    const shard = this.shards[hash >>> SHARD_SHIFT]!;
    const mask = slotsOf(shard) - 1;
    let slot = hash & mask;
    while (shard[2 * slot] !== n + 1) slot = (slot + 1) & mask;
    this.unplace(shard, slot);
    this.shardSizes[hash >>> SHARD_SHIFT]!--;
    this.entryBlock(n).appIds[n & ENTRY_MASK] = DEAD;
    this.live--;
  }

  /** Frees the entries numbered below `n`, which must have been removed. */
  dropBefore(n: number): void {
    this.firstEntry = Math.max(this.firstEntry, Math.min(n, this.nextEntry));
    const firstEntryBlock = this.firstEntry >> ENTRY_BITS;
    this.entryBlocks.splice(0, firstEntryBlock - this.firstEntryBlock);
    this.firstEntryBlock = firstEntryBlock;
    const firstByte = this.firstEntry < this.nextEntry ? this.entryBlock(this.firstEntry).starts[this.firstEntry & ENTRY_MASK]! : this.nextByte;
    const firstByteBlock = Math.floor(firstByte / BYTES_PER_BLOCK);
    this.byteBlocks.splice(0, firstByteBlock - this.firstByteBlock);
    this.firstByteBlock = firstByteBlock;
  }

  isLive(n: number): boolean {
    return this.entryBlock(n).appIds[n & ENTRY_MASK] !== DEAD;
  }

  appIdOf(n: number): number {
    return this.entryBlock(n).appIds[n & ENTRY_MASK]!;
  }

  keyOf(n: number): string {
    const block = this.entryBlock(n);
    const start = block.starts[n & ENTRY_MASK]!;
    const offset = start % BYTES_PER_BLOCK;
    return this.byteBlocks[Math.floor(start / BYTES_PER_BLOCK) - this.firstByteBlock]!.toString('utf8', offset, offset + block.lengths[n & ENTRY_MASK]!);
  }

  value(n: number, column: number): number {
    return this.entryBlock(n).values[(n & ENTRY_MASK) * this.columns + column]!;
  }

  setValue(n: number, column: number, value: number): void {
    this.entryBlock(n).values[(n & ENTRY_MASK) * this.columns + column] = value;
  }

  private entryBlock(n: number): EntryBlock {
    return this.entryBlocks[(n >> ENTRY_BITS) - this.firstEntryBlock]!;
  }

  private hashOfEntry(n: number): number {
    return this.entryBlock(n).hashes[n & ENTRY_MASK]!;
  }

  private slotOf(shard: Shard, appId: number, key: string, hash: number): number {
    const mask = slotsOf(shard) - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const value = shard[2 * slot]!;
      if (value === EMPTY) return -1;
      if (shard[2 * slot + 1] !== hash) continue;
      const n = value - 1;
      if (this.appIdOf(n) === appId && this.keyOf(n) === key) return slot;
    }
  }

  private place(shard: Shard, n: number, hash: number): void {
    const mask = slotsOf(shard) - 1;
    let slot = hash & mask;
    while (shard[2 * slot] !== EMPTY) slot = (slot + 1) & mask;
    shard[2 * slot] = n + 1;
    shard[2 * slot + 1] = hash;
  }

  /** Empties a slot, moving later entries of its probe run back so that no lookup stops short. */
  private unplace(shard: Shard, slot: number): void {
    const mask = slotsOf(shard) - 1;
    let hole = slot;
    shard[2 * hole] = EMPTY;
    for (let next = (hole + 1) & mask; shard[2 * next] !== EMPTY; next = (next + 1) & mask) {
      const home = shard[2 * next + 1]! & mask;
      // The entry may stay when its home lies cyclically in (hole, next].
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      shard[2 * hole] = shard[2 * next]!;
      shard[2 * hole + 1] = shard[2 * next + 1]!;
      shard[2 * next] = EMPTY;
      hole = next;
    }
  }

  /** A shard twice as large with the entries of `shard`. */
  private doubled(shard: Shard): Shard {
    const grown = emptyShard(2 * slotsOf(shard));
    for (let slot = 0; slot < slotsOf(shard); slot++) if (shard[2 * slot] !== EMPTY) this.place(grown, shard[2 * slot]! - 1, shard[2 * slot + 1]!);
    return grown;
  }
}
