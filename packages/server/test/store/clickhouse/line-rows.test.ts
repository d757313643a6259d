// Journal lines written into the events' RowBinary from their bytes (line-rows.ts) are byte for
// byte the rows the load wrote when it parsed each line into an object: JSON columns as
// JSON.stringify of their value, properties split as splitProperties splits the object,
// strings with escapes, unicode, integer-like keys, numbers at their edges. The parsing encoder
// is kept here as the oracle.
import { expect, test } from 'vitest';
import { INSERTED_EVENT_COLUMNS } from '../../../src/store/clickhouse/events.js';
import { LineRowWriter } from '../../../src/store/clickhouse/line-rows.js';
import { RowBinaryWriter } from '../../../src/store/clickhouse/row-binary.js';
import { splitProperties } from '../../../src/store/user-at-event.js';
import { EVENT_COLUMNS, journalLine } from '../../../src/store/journal-line.js';
import type { JournalRecord, StoredEvent } from '../../../src/store/types.js';

const SEGMENT = 'journal-1/segment-7.ndjson';
const EMPTY = Object.fromEntries(Object.keys(EVENT_COLUMNS).map((name) => [name, null])) as unknown as StoredEvent;
const event = (fields: Partial<StoredEvent>): StoredEvent => ({ ...EMPTY, app_id: 3, event_type: 'Page', time: 1_700_000_000_000, server_upload_time: 1_700_000_000_500, skip_user_properties_sync: false, ...fields });

/** The row as the load encoded it from the parsed line (its code before it read the bytes). */
function parsedRow(writer: RowBinaryWriter, line: string, svcId: number | null, ingestSeq: number): void {
  const parsed = JSON.parse(line) as Record<string, unknown>;
  const values: Record<string, unknown> = { ...parsed, svc_id: svcId, ingest_seq: ingestSeq, segment: SEGMENT };
  const properties = (name: string) => splitProperties((parsed[name] ?? null) as Record<string, unknown> | null);
  [values.property_keys, values.property_values] = properties('event_properties');
  [values.user_property_keys, values.user_property_values] = properties('user_properties');
  for (const [name, type] of Object.entries(INSERTED_EVENT_COLUMNS)) {
    let value = values[name] ?? null;
    if (value !== null && EVENT_COLUMNS[name as keyof StoredEvent] === 'JSON') value = JSON.stringify(value);
    if (typeof value === 'boolean') value = Number(value);
    const base = /^Nullable\((.+)\)$/.exec(type)?.[1];
    if (base) writer.uint8(value === null ? 1 : 0);
    if (value === null) continue;
    const write = { Int32: () => writer.int32(value as number), Int64: () => writer.int64(value as number), Float64: () => writer.float64(value as number), UInt8: () => writer.uint8(value as number), String: () => writer.string(value as string) }[base ?? type];
    if (write) write();
    else {
      writer.varUInt((value as string[]).length);
      for (const item of value as string[]) writer.string(item);
    }
  }
}

function bothEncodings(records: JournalRecord[]) {
  const lines = records.map((record) => journalLine(record));
  const bytes = Buffer.from(lines.join('\n'));
  const [parsed, read] = [new RowBinaryWriter(), new RowBinaryWriter()];
  const rows = new LineRowWriter(SEGMENT);
  let start = 0;
  lines.forEach((line, i) => {
    const svcId = i % 3 === 0 ? null : 1_000 + i;
    parsedRow(parsed, line, svcId, 2 ** 40 + i);
    const end = start + Buffer.byteLength(line);
    rows.write(read, bytes, start, end, svcId, 2 ** 40 + i);
    start = end + 1;
  });
  return { parsed: parsed.bytes(), read: read.bytes() };
}

const awkward = JSON.parse('{"__proto__":{"x":1},"2":"two","b":1,"1":"one"}') as Record<string, unknown>;

test('rows written from the lines are the bytes the parsed lines gave', () => {
  const { parsed, read } = bothEncodings([
    event({ user_id: 'u1', device_id: 'd1', insert_id: 'i-1', session_id: 1_700_000_000_000, event_id: Number.MAX_SAFE_INTEGER }),
    event({
      user_id: 'quote " back \\ slash \n tab \t',
      device_id: 'édge 😀 世界',
      event_type: '$identify',
      event_properties: { 'a"b': 'q"uote', 'back\\slash': 'x\\y', '{': '}{][,:', unicode: 'héllo 😀', lone: '\ud800', control: '\u0001', empty: {}, list: [1, 'two', null, { deep: [true] }], nothing: null, number: 1.25 },
      user_properties: { $set: { plan: 'pro' }, $add: { n: 1 } },
      groups: { org: ['acme', 'b"c'] },
      group_properties: { '': '' },
      plan: { branch: 'main', version: '1.0' },
      skip_user_properties_sync: true,
    }),
    event({ price: 1.68, revenue: 0.1 + 0.2, location_lat: 5e-324, location_lng: -1e-300, quantity: -2147483648, session_id: -1, event_properties: { tiny: 5e-324, huge: 1e21, negative: -0, exp: 1.5e300 } }),
    event({ event_properties: awkward, user_properties: {}, country: '', city: '\\', language: '"' }),
    { ...event({ device_id: 'd2' }), released_attribution: 'h-1' },
    event({ quantity: 2147483647, revenue: -0, ip: '10.0.0.1', idfa: 'AAAA-\u2028-\u2029', os_version: '17.4.1' }),
  ]);
  expect(read.equals(parsed)).toBe(true);
});

test('fields in any order, and repeated ones, read as JSON.parse reads them', () => {
  const line = '{"event_type":"Late","server_upload_time":2,"app_id":3,"time":1,"skip_user_properties_sync":false,"user_id":"first","user_id":"last","event_properties":{"k":1}}';
  const bytes = Buffer.from(line);
  const [parsed, read] = [new RowBinaryWriter(), new RowBinaryWriter()];
  parsedRow(parsed, line, 5, 6);
  new LineRowWriter(SEGMENT).write(read, bytes, 0, bytes.length, 5, 6);
  expect(read.bytes().equals(parsed.bytes())).toBe(true);
});

test('a value its column cannot hold is refused, as the parsed line was', () => {
  const refused = (record: JournalRecord) => {
    const bytes = Buffer.from(journalLine(record));
    return () => new LineRowWriter(SEGMENT).write(new RowBinaryWriter(), bytes, 0, bytes.length, null, 1);
  };
  expect(refused(event({ quantity: 3e9 }))).toThrow(RangeError);
  expect(refused(event({ event_type: null as never }))).toThrow(/NULL in a column of type String/);
  expect(refused(event({ user_id: 7 as never }))).toThrow(/user_id is not a string/);
  expect(refused(event({ event_properties: [1] as never }))).toThrow(/not an object/);
});
