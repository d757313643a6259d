// A journal line's fields read from its bytes (json-members.ts): where each field's value is,
// by its index in LINE_COLUMNS, and its scalars decoded only when asked for. The ClickHouse
// load reads a segment's lines this way instead of parsing them into objects.
import { LINE_COLUMNS } from '../journal-line.js';
import { JsonMembers, KEY_ESCAPED, VALUE_ESCAPED } from './json-members.js';

/** The fields of a line, in LINE_COLUMNS' order (an event's first, EVENT_COLUMNS' order). */
export const LINE_FIELDS: readonly string[] = Object.keys(LINE_COLUMNS);
export const fieldIndex = (name: string): number => {
  const index = LINE_FIELDS.indexOf(name);
  if (index === -1) throw new Error(`Not a journal line field: ${name}`);
  return index;
};

const NAMES = LINE_FIELDS.map((name) => Buffer.from(name));
const BY_NAME = new Map(LINE_FIELDS.map((name, index) => [name, index]));

const QUOTE = 0x22;
const MINUS = 0x2d;
const NULL_FIRST_BYTE = 0x6e;
const TRUE_FIRST_BYTE = 0x74;
const FALSE_FIRST_BYTE = 0x66;

function isNamed(field: number, bytes: Buffer, start: number, end: number): boolean {
  const name = NAMES[field]!;
  if (name.length !== end - start) return false;
  for (let i = 0; i < name.length; i++) if (name[i] !== bytes[start + i]) return false;
  return true;
}

/**
 * The field a key names (-1: none; an unknown field is left unread, as the parsed line's was).
 * journalLine writes the fields in LINE_FIELDS' order, so those after the last one found (`from`)
 * are tried first: a key is matched in a few comparisons of bytes, no string made of it.
 */
function fieldOf(bytes: Buffer, start: number, end: number, escaped: boolean, from: number): number {
  if (escaped) return BY_NAME.get(JSON.parse(bytes.toString('utf8', start - 1, end + 1)) as string) ?? -1;
  for (let field = from; field < NAMES.length; field++) if (isNamed(field, bytes, start, end)) return field;
  for (let field = 0; field < from; field++) if (isNamed(field, bytes, start, end)) return field;
  return -1;
}

/** A JSON number's value from its text: up to 15 digits exactly as an integer without making a string, else as JSON.parse reads it. */
function numberIn(bytes: Buffer, start: number, end: number): number {
  const negative = bytes[start] === MINUS;
  let at = negative ? start + 1 : start;
  if (end > at && end - at <= 15) {
    let value = 0;
    for (; at < end; at++) {
      const digit = bytes[at]! - 0x30;
      if (digit < 0 || digit > 9) break;
      value = value * 10 + digit;
    }
    if (at === end) return negative ? -value : value;
  }
  const value = Number(bytes.toString('latin1', start, end));
  if (Number.isNaN(value)) throw new SyntaxError(`Not a JSON number: ${bytes.toString('latin1', start, end)}`);
  return value;
}

/** One line's fields at a time (read again for each line). */
export class LineFields {
  private bytes: Buffer = Buffer.alloc(0);
  private readonly members = new JsonMembers();
  /** The member of each field (-1: absent). */
  private readonly memberOf = new Int32Array(LINE_FIELDS.length);

  /** Reads the line in `bytes[start, end)`. */
  read(bytes: Buffer, start: number, end: number): this {
    this.bytes = bytes;
    const members = this.members.read(bytes, start, end);
    this.memberOf.fill(-1);
    let next = 0;
    for (let i = 0; i < members.count; i++) {
      const field = fieldOf(bytes, members.keyStarts[i]!, members.keyEnds[i]!, (members.flags[i]! & KEY_ESCAPED) !== 0, next);
      if (field === -1) continue;
      // A repeated field: the last one, as JSON.parse keeps.
      this.memberOf[field] = i;
      next = field + 1;
    }
    return this;
  }

  /** The field is absent or null (journal lines leave null fields out). */
  isNull(field: number): boolean {
    const member = this.memberOf[field]!;
    return member === -1 || this.bytes[this.members.valueStarts[member]!] === NULL_FIRST_BYTE;
  }

  /** Where the field's value starts (its JSON text; a string's with its quotes): only for a field not null. */
  start(field: number): number {
    return this.members.valueStarts[this.memberOf[field]!]!;
  }

  end(field: number): number {
    return this.members.valueEnds[this.memberOf[field]!]!;
  }

  /** The field's string value holds an escape: its bytes between the quotes are not its UTF-8. */
  isEscaped(field: number): boolean {
    return (this.members.flags[this.memberOf[field]!]! & VALUE_ESCAPED) !== 0;
  }

  number(field: number): number | null {
    if (this.isNull(field)) return null;
    const start = this.start(field);
    const first = this.bytes[start]!;
    if (first !== MINUS && (first < 0x30 || first > 0x39)) throw new TypeError(`${LINE_FIELDS[field]} is not a number`);
    return numberIn(this.bytes, start, this.end(field));
  }

  string(field: number): string | null {
    if (this.isNull(field)) return null;
    const start = this.start(field);
    const end = this.end(field);
    if (this.bytes[start] !== QUOTE) throw new TypeError(`${LINE_FIELDS[field]} is not a string`);
    return this.isEscaped(field) ? (JSON.parse(this.bytes.toString('utf8', start, end)) as string) : this.bytes.toString('utf8', start + 1, end - 1);
  }

  boolean(field: number): boolean | null {
    if (this.isNull(field)) return null;
    // The reader checked the literal's bytes: its first tells which.
    const first = this.bytes[this.start(field)];
    if (first !== TRUE_FIRST_BYTE && first !== FALSE_FIRST_BYTE) throw new TypeError(`${LINE_FIELDS[field]} is not a boolean`);
    return first === TRUE_FIRST_BYTE;
  }
}
