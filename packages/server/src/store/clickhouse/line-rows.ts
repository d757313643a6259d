// Journal lines as rows of ClickHouse's events table (INSERTED_EVENT_COLUMNS) in RowBinary,
// written from the lines' bytes: each line's members found once (line-fields.ts), numbers
// decoded, strings and JSON columns copied as the bytes they are in the line, and the
// property objects split into keys and values from the same bytes. No line becomes an object.
//
// A JSON column's stored text is JSON.stringify of its value. Lines are written by journalLine
// (JSON.stringify), whose text JSON.stringify(JSON.parse(text)) gives back byte for byte (no
// whitespace, shortest numbers, the same escapes, integer-like keys already first), so the
// line's bytes are that text. A key or string with an escape is decoded: its bytes are not its
// UTF-8.
import { EVENT_COLUMNS } from '../journal-line.js';
import { INSERTED_EVENT_COLUMNS } from './events.js';
import { JsonMembers, KEY_ESCAPED } from './json-members.js';
import { fieldIndex, LINE_FIELDS, LineFields } from './line-fields.js';
import { RowBinaryWriter } from './row-binary.js';

/** What a column's value is and how it is written. */
const enum Kind {
  Int32,
  Int64,
  Float64,
  Boolean,
  String,
  /** A JSON field: its text. */
  Json,
  SvcId,
  IngestSeq,
  Segment,
  /** An object field's keys and its values' texts: two Array(String) columns. */
  Split,
}
const NUMBER_KINDS: Record<string, Kind> = { Int32: Kind.Int32, Int64: Kind.Int64, Float64: Kind.Float64, UInt8: Kind.Boolean, String: Kind.String };

interface Column {
  kind: Kind;
  /** The line field it comes from (LINE_FIELDS' index; -1 for the load's own values). */
  field: number;
  nullable: boolean;
  type: string;
}

/** INSERTED_EVENT_COLUMNS in their order, each as where its value comes from. */
const COLUMNS: readonly Column[] = (() => {
  const columns: Column[] = [];
  const entries = Object.entries(INSERTED_EVENT_COLUMNS);
  for (let i = 0; i < entries.length; i++) {
    const [name, type] = entries[i]!;
    const nullable = type.startsWith('Nullable(');
    const column = (kind: Kind, field = -1) => columns.push({ kind, field, nullable, type });
    const split = /^(property|user_property)_keys$/.exec(name);
    if (split) {
      if (entries[++i]?.[0] !== `${split[1]}_values`) throw new Error(`${name} without its values next`);
      column(Kind.Split, fieldIndex(split[1] === 'property' ? 'event_properties' : 'user_properties'));
    } else if (name === 'svc_id') column(Kind.SvcId);
    else if (name === 'ingest_seq') column(Kind.IngestSeq);
    else if (name === 'segment') column(Kind.Segment);
    else if (LINE_FIELDS.includes(name)) {
      const kind = EVENT_COLUMNS[name as keyof typeof EVENT_COLUMNS] === 'JSON' ? Kind.Json : NUMBER_KINDS[nullable ? type.slice('Nullable('.length, -1) : type];
      if (kind === undefined) throw new Error(`No RowBinary encoding for ${type}`);
      column(kind, fieldIndex(name));
    } else throw new Error(`No journal line field for the column ${name}`);
  }
  return columns;
})();

const QUOTE = 0x22;
const TIME = fieldIndex('time');
const EVENT_TYPE = fieldIndex('event_type');
const OPEN_BRACE = 0x7b;

/** Writes the rows of one segment's lines (its name in each). */
export class LineRowWriter {
  private readonly fields = new LineFields();
  private readonly properties = new JsonMembers();
  private readonly segment: Buffer;

  constructor(segment: string) {
    this.segment = Buffer.from(segment);
  }

  /** The row of the line in `bytes[start, end)`, with the svc_id and ingest_seq the load gave it. */
  write(writer: RowBinaryWriter, bytes: Buffer, start: number, end: number, svcId: number | null, ingestSeq: number): void {
    const fields = this.fields.read(bytes, start, end);
    for (const column of COLUMNS) {
      const { kind, field } = column;
      if (kind === Kind.Segment) writer.copy(this.segment, 0, this.segment.length);
      else if (kind === Kind.Split) {
        if (fields.isNull(field)) {
          writer.varUInt(0);
          writer.varUInt(0);
        } else this.writeSplit(writer, bytes, fields.start(field), fields.end(field));
      } else if (kind === Kind.SvcId || kind === Kind.IngestSeq) {
        const value = kind === Kind.SvcId ? svcId : ingestSeq;
        if (!present(writer, column, value === null)) continue;
        writer.int64(value!);
      } else if (present(writer, column, fields.isNull(field))) this.writeField(writer, bytes, kind, field);
    }
  }

  /** The time of the line written last. */
  time(): number {
    return this.fields.number(TIME)!;
  }

  /** The event type of the line written last. */
  eventType(): string {
    return this.fields.string(EVENT_TYPE)!;
  }

  private writeField(writer: RowBinaryWriter, bytes: Buffer, kind: Kind, field: number): void {
    const { fields } = this;
    switch (kind) {
      case Kind.Json:
        return writer.copy(bytes, fields.start(field), fields.end(field));
      case Kind.String:
        if (bytes[fields.start(field)] !== QUOTE || fields.isEscaped(field)) return writer.string(fields.string(field)!);
        return writer.copy(bytes, fields.start(field) + 1, fields.end(field) - 1);
      case Kind.Boolean:
        return writer.uint8(fields.boolean(field) ? 1 : 0);
      case Kind.Int32:
        return writer.int32(fields.number(field)!);
      case Kind.Int64:
        return writer.int64(fields.number(field)!);
      default:
        return writer.float64(fields.number(field)!);
    }
  }

  /** An object's keys (decoded when escaped) and its values' JSON texts, as two arrays: what splitProperties makes of the object. */
  private writeSplit(writer: RowBinaryWriter, bytes: Buffer, start: number, end: number): void {
    if (bytes[start] !== OPEN_BRACE) throw new TypeError('Properties that are not an object');
    const members = this.properties.read(bytes, start, end);
    writer.varUInt(members.count);
    for (let i = 0; i < members.count; i++) {
      const [keyStart, keyEnd] = [members.keyStarts[i]!, members.keyEnds[i]!];
      if ((members.flags[i]! & KEY_ESCAPED) !== 0) writer.string(JSON.parse(bytes.toString('utf8', keyStart - 1, keyEnd + 1)) as string);
      else writer.copy(bytes, keyStart, keyEnd);
    }
    writer.varUInt(members.count);
    for (let i = 0; i < members.count; i++) writer.copy(bytes, members.valueStarts[i]!, members.valueEnds[i]!);
  }
}

/** Writes a Nullable column's marker; false for NULL (nothing more to write). */
function present(writer: RowBinaryWriter, column: Column, isNull: boolean): boolean {
  if (isNull && !column.nullable) throw new TypeError(`NULL in a column of type ${column.type}`);
  if (column.nullable) writer.uint8(isNull ? 1 : 0);
  return !isNull;
}
