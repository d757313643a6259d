// The top-level members of one JSON object found in its bytes, without building it: each
// member's key and value as byte ranges, so that a journal line's fields are read, or copied
// as their JSON text, without JSON.parse (a ClickHouse load spent most of its CPU parsing and
// re-serializing lines, docs/performance.md). The object's own structure is checked; inside a
// nested value only strings and brackets are followed, its text is never interpreted.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const [TRUE, FALSE, NULL] = [Buffer.from('true'), Buffer.from('false'), Buffer.from('null')];

/** A byte of a JSON number's text (its grammar is the reader's to check, numberIn). */
const isNumberByte = (byte: number) => (byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x2b || byte === 0x2e || byte === 0x65 || byte === 0x45;
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/** Flags of a member: its key, or its string value, holds an escape (its bytes are not its text). */
export const KEY_ESCAPED = 1;
export const VALUE_ESCAPED = 2;

/** One object's members, read again for each object (the arrays are reused, grown when needed). */
export class JsonMembers {
  count = 0;
  /** A key's bytes inside its quotes. */
  keyStarts = new Int32Array(64);
  keyEnds = new Int32Array(64);
  /** A value's whole text: a string's with its quotes. */
  valueStarts = new Int32Array(64);
  valueEnds = new Int32Array(64);
  flags = new Uint8Array(64);
  private escaped = false;
  private closers = new Uint8Array(64);

  /** Reads the object that `bytes[start, end)` holds (JSON whitespace around it allowed); throws a SyntaxError when it is not one. */
  read(bytes: Uint8Array, start: number, end: number): this {
    this.count = 0;
    let at = skipSpace(bytes, start, end);
    if (bytes[at] !== OPEN_BRACE) fail(at);
    at = skipSpace(bytes, at + 1, end);
    if (bytes[at] === CLOSE_BRACE) return this.finish(bytes, at + 1, end);
    for (;;) {
      if (at >= end || bytes[at] !== QUOTE) fail(at);
      const keyStart = at + 1;
      const keyEnd = this.stringEnd(bytes, keyStart, end);
      let flags = this.escaped ? KEY_ESCAPED : 0;
      at = skipSpace(bytes, keyEnd + 1, end);
      if (bytes[at] !== COLON) fail(at);
      const valueStart = skipSpace(bytes, at + 1, end);
      const valueEnd = this.valueEnd(bytes, valueStart, end);
      if (bytes[valueStart] === QUOTE && this.escaped) flags |= VALUE_ESCAPED;
      this.push(keyStart, keyEnd, valueStart, valueEnd, flags);
      at = skipSpace(bytes, valueEnd, end);
      if (bytes[at] === CLOSE_BRACE) return this.finish(bytes, at + 1, end);
      if (at >= end || bytes[at] !== COMMA) fail(at);
      at = skipSpace(bytes, at + 1, end);
    }
  }

  private finish(bytes: Uint8Array, at: number, end: number): this {
    if (skipSpace(bytes, at, end) !== end) fail(at);
    return this;
  }

  private push(keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, flags: number): void {
    if (this.count === this.flags.length) this.grow();
    const i = this.count++;
    this.keyStarts[i] = keyStart;
    this.keyEnds[i] = keyEnd;
    this.valueStarts[i] = valueStart;
    this.valueEnds[i] = valueEnd;
    this.flags[i] = flags;
  }

  private grow(): void {
    this.keyStarts = grown(this.keyStarts);
    this.keyEnds = grown(this.keyEnds);
    this.valueStarts = grown(this.valueStarts);
    this.valueEnds = grown(this.valueEnds);
    this.flags = grown(this.flags);
  }

  /** The index of the quote that closes the string whose text starts at `from`; notes whether it holds an escape. */
  private stringEnd(bytes: Uint8Array, from: number, end: number): number {
    let escaped = false;
    for (let i = from; i < end; i++) {
      const byte = bytes[i];
      if (byte === QUOTE) {
        this.escaped = escaped;
        return i;
      }
      if (byte === BACKSLASH) {
        escaped = true;
        i++;
      }
    }
    return fail(end);
  }

  /** Where the value that starts at `at` ends (exclusive). */
  private valueEnd(bytes: Uint8Array, at: number, end: number): number {
    const first = bytes[at];
    if (first === QUOTE) return this.stringEnd(bytes, at + 1, end) + 1;
    if (first === OPEN_BRACE || first === OPEN_BRACKET) return this.nestedEnd(bytes, at, end);
    const literal = first === TRUE[0] ? TRUE : first === FALSE[0] ? FALSE : first === NULL[0] ? NULL : undefined;
    if (literal) {
      for (let i = 1; i < literal.length; i++) if (bytes[at + i] !== literal[i]) fail(at + i);
      return at + literal.length;
    }
    let i = at;
    while (i < end && isNumberByte(bytes[i]!)) i++;
    return i > at ? i : fail(at);
  }

  /** Where the object or array that starts at `at` ends (exclusive): its brackets matched, its strings skipped. */
  private nestedEnd(bytes: Uint8Array, at: number, end: number): number {
    // The closing bracket each open one expects, innermost last (a bracket's is its code + 2).
    let depth = 0;
    for (let i = at; i < end; i++) {
      const byte = bytes[i]!;
      if (byte === QUOTE) i = this.stringEnd(bytes, i + 1, end);
      else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        if (depth === this.closers.length) this.closers = grown(this.closers);
        this.closers[depth++] = byte + 2;
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        if (depth === 0 || this.closers[--depth] !== byte) fail(i);
        if (depth === 0) return i + 1;
      }
    }
    return fail(end);
  }
}

/** A copy of twice the length. */
function grown<T extends Int32Array | Uint8Array>(array: T): T {
  const copy = new (array.constructor as new (length: number) => T)(array.length * 2);
  copy.set(array);
  return copy;
}

function skipSpace(bytes: Uint8Array, at: number, end: number): number {
  while (at < end && isSpace(bytes[at])) at++;
  return at;
}

function fail(at: number): never {
  throw new SyntaxError(`Not a JSON object: unexpected byte at ${at}`);
}
