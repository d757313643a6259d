// Rows in ClickHouse's RowBinary format, for inserts: 18.16 parses floats in its text formats
// (JSONEachRow, TSV, CSV) with a fast parser that is off by one unit in the last place for
// some values (1.68 is stored as 1.6800000000000002; SQL literals are exact), so values go
// over the wire as their IEEE-754 bytes instead.

/** A growing little-endian buffer. */
class Writer {
  private buffer = Buffer.allocUnsafe(1 << 16);
  private length = 0;

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

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

type Encode = (writer: Writer, value: unknown) => void;
const BASE: Record<string, Encode> = {
  Int32: (w, v) => w.int32(v as number),
  Int64: (w, v) => w.int64(v as number),
  Float64: (w, v) => w.float64(v as number),
  UInt8: (w, v) => w.uint8(v as number),
  String: (w, v) => w.string(v as string),
};

function encoderOf(type: string): Encode {
  const array = /^Array\((.+)\)$/.exec(type);
  if (array) {
    const element = encoderOf(array[1]!);
    return (writer, value) => {
      const values = value as readonly unknown[];
      writer.varUInt(values.length);
      for (const item of values) element(writer, item);
    };
  }
  const nullable = /^Nullable\((.+)\)$/.exec(type);
  const base = BASE[nullable ? nullable[1]! : type];
  if (!base) throw new Error(`No RowBinary encoding for ${type}`);
  if (!nullable) {
    return (writer, value) => {
      if (value === null || value === undefined) throw new TypeError(`NULL in a column of type ${type}`);
      base(writer, value);
    };
  }
  return (writer, value) => {
    if (value === null || value === undefined) return writer.uint8(1);
    writer.uint8(0);
    base(writer, value);
  };
}

/** Encodes rows (values in the order of `types`) as RowBinary for columns of those ClickHouse types. */
export function rowBinaryEncoder(types: readonly string[]): (rows: readonly (readonly unknown[])[]) => Buffer {
  const encoders = types.map(encoderOf);
  return (rows) => {
    const writer = new Writer();
    for (const row of rows) for (let i = 0; i < encoders.length; i++) encoders[i]!(writer, row[i]);
    return writer.bytes();
  };
}
