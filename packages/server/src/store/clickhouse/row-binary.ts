// Rows in ClickHouse's RowBinary format, for inserts: 18.16 parses floats in its text formats
// (JSONEachRow, TSV, CSV) with a fast parser that is off by one unit in the last place for
// some values (1.68 is stored as 1.6800000000000002; SQL literals are exact), so values go
// over the wire as their IEEE-754 bytes instead.

/** RowBinary values into a growing little-endian buffer. */
export class RowBinaryWriter {
  private buffer: Buffer;
  private length = 0;

  /** `expectedBytes`: room to start with (grown by doubling past it). */
  constructor(expectedBytes = 1 << 16) {
    this.buffer = Buffer.allocUnsafe(expectedBytes);
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const larger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(larger, 0, 0, this.length);
    this.buffer = larger;
  }

  uint8(value: number): void {
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  int32(value: number): void {
    this.reserve(4);
    this.length = this.buffer.writeInt32LE(value, this.length);
  }

  /** Two 32-bit halves (a BigInt per value costs several times more). */
  int64(value: number): void {
    if (!Number.isSafeInteger(value)) throw new RangeError(`Not an integer below 2^53: ${value}`);
    this.reserve(8);
    this.buffer.writeUInt32LE(value >>> 0, this.length);
    this.length = this.buffer.writeInt32LE(Math.floor(value / 4294967296), this.length + 4);
  }

  float64(value: number): void {
    this.reserve(8);
    this.length = this.buffer.writeDoubleLE(value, this.length);
  }

  /** An unsigned LEB128 (lengths of strings and arrays). */
  varUInt(value: number): void {
    this.reserve(5);
    for (let n = value; ; ) {
      const low = n & 0x7f;
      n >>>= 7;
      this.buffer[this.length++] = n === 0 ? low : low | 0x80;
      if (n === 0) break;
    }
  }

  /** UTF-8 bytes after their length (written in place, no copy). */
  string(value: string): void {
    const length = Buffer.byteLength(value, 'utf8');
    this.varUInt(length);
    this.reserve(length);
    this.length += this.buffer.write(value, this.length, length, 'utf8');
  }

  /** Bytes that are already a string's UTF-8 (a journal line's), after their length. */
  copy(source: Uint8Array, start: number, end: number): void {
    const length = end - start;
    this.varUInt(length);
    this.reserve(length);
    // Most are short: a loop costs less than a view and a native copy.
    if (length < 64) for (let i = start; i < end; i++) this.buffer[this.length++] = source[i]!;
    else {
      this.buffer.set(source.subarray(start, end), this.length);
      this.length += length;
    }
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}
