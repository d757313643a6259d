import { describe, expect, it } from 'vitest';
import { murmur3X86_32 } from '../src/murmur3.js';

// Published MurmurHash3_x86_32 test vectors (the SMHasher reference implementation's outputs as
// collected for implementers, e.g. in the answers to "MurmurHash3 test vectors" on Stack Overflow).
const VECTORS: Array<[input: string, seed: number, hash: number]> = [
  ['', 0, 0],
  ['', 1, 0x514e28b7],
  ['', 0xffffffff, 0x81f16f39],
  ['\0\0\0\0', 0, 0x2362f9de],
  ['\0\0\0', 0, 0x85f0b427],
  ['\0\0', 0, 0x30f4c306],
  ['\0', 0, 0x514e28b7],
  ['!Ce', 0, 0x7e4a8634],
  ['!C', 0, 0xa0f7b07a],
  ['!', 0, 0x72661cf4],
  ['aaaa', 0x9747b28c, 0x5a97808a],
  ['aaa', 0x9747b28c, 0x283e0130],
  ['aa', 0x9747b28c, 0x5d211726],
  ['a', 0x9747b28c, 0x7fa09ea6],
  ['abcd', 0x9747b28c, 0xf0478627],
  ['abc', 0x9747b28c, 0xc84a62dd],
  ['ab', 0x9747b28c, 0x74875592],
  ['Hello, world!', 0x9747b28c, 0x24884cba],
  ['ππππππππ', 0x9747b28c, 0xd58063c1],
  ['a'.repeat(256), 0x9747b28c, 0x37405bdc],
  ['The quick brown fox jumps over the lazy dog', 0x9747b28c, 0x2fa826cd],
  ['The quick brown fox jumps over the lazy dog', 0, 0x2e4ff723],
];

describe('murmur3X86_32', () => {
  it.each(VECTORS)('hashes %j with seed %i', (input, seed, hash) => {
    expect(murmur3X86_32(input, seed)).toBe(hash);
  });

  it('hashes with seed 0 by default and returns an unsigned 32-bit integer', () => {
    expect(murmur3X86_32('The quick brown fox jumps over the lazy dog')).toBe(0x2e4ff723);
    const hash = murmur3X86_32('user-with-a-high-hash');
    expect(Number.isInteger(hash) && hash >= 0 && hash <= 0xffffffff).toBe(true);
  });

  it('hashes the UTF-8 bytes, not UTF-16 code units', () => {
    // "é" is one UTF-16 unit but the two bytes C3 A9; "\u00c3\u00a9" is two units but four bytes.
    expect(murmur3X86_32('é')).not.toBe(murmur3X86_32('\u00c3\u00a9'));
    expect(murmur3X86_32('ππππππππ', 0x9747b28c)).toBe(0xd58063c1);
  });
});
