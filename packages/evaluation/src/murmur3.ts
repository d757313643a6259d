// MurmurHash3 x86 32-bit (Austin Appleby's reference MurmurHash3_x86_32) over the UTF-8 bytes
// of a string, as the official SDKs' engine hashes bucketing keys (experiment-core
// `hash32x86(input, seed = 0)`, which also encodes the input as UTF-8 first).

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;
const utf8 = new TextEncoder();

const rotateLeft = (x: number, bits: number): number => (x << bits) | (x >>> (32 - bits));

const scramble = (k: number): number => Math.imul(rotateLeft(Math.imul(k, C1), 15), C2);

/** The unsigned 32-bit MurmurHash3 x86 hash of `input`'s UTF-8 bytes. */
export function murmur3X86_32(input: string, seed = 0): number {
  const bytes = utf8.encode(input);
  const blockEnd = bytes.length - (bytes.length % 4);
  let hash = seed | 0;
  for (let i = 0; i < blockEnd; i += 4) {
    const k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    hash ^= scramble(k);
    hash = (Math.imul(rotateLeft(hash, 13), 5) + 0xe6546b64) | 0;
  }
  let tail = 0;
  for (let i = bytes.length - 1; i >= blockEnd; i--) tail = (tail << 8) | bytes[i]!;
  if (bytes.length > blockEnd) hash ^= scramble(tail);
  hash ^= bytes.length;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
