// Plain funnels on ClickHouse from each user's events, read for the question (issue 27): the
// steps' events of the scanned range (every event for sequential funnels), three fixed-width
// columns per event in RowBinary, are put side by side per user here and followed by the same
// code as the embedded engine's timelines (timelines/funnel.ts). ClickHouse 18.16 has no
// ordered aggregation: sorting each user's events there (arraySort of tuples, then the paths'
// array functions) took 13.7 s at 10 million events against 0.2 s for the scan.
// A share of the users at a time (`svc_id % shares`), so memory stays bounded however many
// events the question covers.
import { type FunnelGroup, windowMsOf } from '../../model/funnel-times.js';
import { INACTIVE_EVENT_TYPES, plainEventType } from '../../model/query.js';
import { funnelOfUsers, type TimelineFunnelQuery, type UsersEvents } from '../timelines/funnel.js';
import type { ClickHouseEvents } from './events.js';
import { literal } from './sql-text.js';

/** Events are sorted as `(time - start) * 256 + type`: exact over spans below 2^44 ms (557 years). */
const SPAN_LIMIT_MS = 2 ** 44;
/** Stands for every event type not in the question's dictionary: none of the steps' names, and active. */
const OTHER_TYPE = '\u0000other';

export interface StreamedFunnelLimits {
  /** Rows read per share of the users (about 40 bytes each here while a share is put in order). */
  rowsPerShare: number;
  /** Users are numbered through an array of a place per svc_id of the range when it has at most this many places per row. */
  placesPerRow: number;
}

const LIMITS: StreamedFunnelLimits = { rowsPerShare: 4_000_000, placesPerRow: 4 };

/**
 * The funnel's groups, or undefined when its events are not read this way (a scanned span of
 * more than 557 years, or over 250 step names): the SQL answers then.
 */
export async function streamedFunnel(store: ClickHouseEvents, query: TimelineFunnelQuery, limits = LIMITS): Promise<FunnelGroup[] | undefined> {
  const [fromMs, toMs] = [Math.trunc(query.range.startMs), Math.trunc(query.range.endMs + windowMsOf(query))];
  if (toMs - fromMs >= SPAN_LIMIT_MS) return undefined;
  const named = query.eventTypes.filter((type) => type !== '_all' && type !== '_active').map(plainEventType);
  // Index 0: any other type. The inactive types are named so that `_active` steps can tell them.
  const typeNames = [OTHER_TYPE, ...new Set([...named, ...INACTIVE_EVENT_TYPES])];
  if (typeNames.length > 255) return undefined;
  const everyEvent = query.mode === 'sequential' || named.length < query.eventTypes.length;
  const where = [
    `app_id = ${Math.trunc(query.appId)}`,
    'svc_id IS NOT NULL',
    `time >= ${fromMs}`,
    `time < ${toMs}`,
    ...(everyEvent ? [] : [`event_type IN (${named.map(literal).join(', ')})`]),
  ].join(' AND ');
  const [found] = await store.query(`SELECT count() AS n, min(svc_id) AS low, max(svc_id) AS high FROM events WHERE ${where}`);
  const [rows, low, high] = [Number(found?.n ?? 0), Number(found?.low ?? 0), Number(found?.high ?? 0)];
  const shares = Math.max(1, Math.ceil(rows / limits.rowsPerShare));
  const dictionary = `[${typeNames.slice(1).map(literal).join(', ')}]`;
  // Sequential funnels: same-time events in ingestion order (the next event is the step).
  const withSeqs = query.mode === 'sequential';
  const columns = `toFloat64(assumeNotNull(svc_id)), toFloat64(time),${withSeqs ? ' toFloat64(ingest_seq),' : ''} toUInt8(indexOf(${dictionary}, event_type))`;
  async function* users(): AsyncIterable<UsersEvents> {
    for (let share = 0; share < shares; share++) {
      const ofShare = shares === 1 ? '' : ` AND svc_id % ${shares} = ${share}`;
      const read = await readRows(store.queryBytes(`SELECT ${columns} FROM events WHERE ${where}${ofShare} FORMAT RowBinary`), withSeqs);
      yield usersOf(read, { low, high, every: shares, placesPerRow: limits.placesPerRow }, fromMs);
    }
  }
  return funnelOfUsers(users(), typeNames, query);
}

/** Rows as columns; `seqs` (ingest_seq) when read. */
interface Rows {
  users: Float64Array;
  times: Float64Array;
  seqs: Float64Array | undefined;
  types: Uint8Array;
  length: number;
}

const emptyRows = (size: number, withSeqs: boolean): Rows => ({
  users: new Float64Array(size),
  times: new Float64Array(size),
  seqs: withSeqs ? new Float64Array(size) : undefined,
  types: new Uint8Array(size),
  length: 0,
});

/** The rows of a RowBinary answer: svc_id, time, ingest_seq when read (Float64), the type's index (UInt8); chunks end anywhere in a row. */
async function readRows(chunks: AsyncIterable<Buffer>, withSeqs: boolean): Promise<Rows> {
  const rowBytes = withSeqs ? 25 : 17;
  let rows = emptyRows(1 << 16, withSeqs);
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of chunks) {
    const bytes = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
    const whole = Math.floor(bytes.length / rowBytes);
    if (rows.length + whole > rows.users.length) rows = grown(rows, rows.length + whole);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const { users, times, seqs, types } = rows;
    for (let i = 0, at = 0, row = rows.length; i < whole; i++, at += rowBytes, row++) {
      users[row] = view.getFloat64(at, true);
      times[row] = view.getFloat64(at + 8, true);
      if (seqs) seqs[row] = view.getFloat64(at + 16, true);
      types[row] = bytes[at + rowBytes - 1]!;
    }
    rows.length += whole;
    rest = bytes.subarray(whole * rowBytes);
  }
  if (rest.length > 0) throw new Error(`ClickHouse answered ${rest.length} bytes past the last whole row of the users' events`);
  return rows;
}

function grown(rows: Rows, needed: number): Rows {
  let size = rows.users.length;
  while (size < needed) size *= 2;
  const next = { ...emptyRows(size, rows.seqs !== undefined), length: rows.length };
  next.users.set(rows.users.subarray(0, rows.length));
  next.times.set(rows.times.subarray(0, rows.length));
  next.seqs?.set(rows.seqs!.subarray(0, rows.length));
  next.types.set(rows.types.subarray(0, rows.length));
  return next;
}

/** The svc_ids read: in [low, high], those of a share `every` apart. */
interface Ids {
  low: number;
  high: number;
  every: number;
  placesPerRow: number;
}

/**
 * Each user's events by time, side by side: placed by user, then sorted per user as one
 * number, `(time - fromMs) * 256 + type`; a user with same-time events, when their ingestion
 * order was read, sorted again by time and ingestion.
 */
function usersOf(rows: Rows, ids: Ids, fromMs: number): UsersEvents {
  const { times, seqs, types, length } = rows;
  const { ordinalOf, ordinals, counts } = numberedUsers(rows, ids);
  const starts = new Int32Array(ordinals + 1);
  for (let u = 0; u < ordinals; u++) starts[u + 1] = starts[u]! + counts[u]!;
  const keys = new Float64Array(length);
  const rowAt = seqs ? new Int32Array(length) : undefined;
  const next = starts.slice(0, ordinals);
  for (let i = 0; i < length; i++) {
    const at = next[ordinalOf[i]!]!++;
    keys[at] = (times[i]! - fromMs) * 256 + types[i]!;
    if (rowAt) rowAt[at] = i;
  }
  const sorted: UsersEvents = { times: new Float64Array(length), types: new Int32Array(length), starts };
  for (let u = 0; u < ordinals; u++) {
    const [from, to] = [starts[u]!, starts[u + 1]!];
    keys.subarray(from, to).sort();
    let tied = false;
    for (let i = from; i < to; i++) {
      const time = Math.floor(keys[i]! / 256);
      sorted.times[i] = fromMs + time;
      sorted.types[i] = keys[i]! - time * 256;
      tied ||= i > from && sorted.times[i] === sorted.times[i - 1];
    }
    if (tied && rowAt) {
      const own = rowAt.subarray(from, to).sort((a, b) => times[a]! - times[b]! || seqs![a]! - seqs![b]!);
      for (let i = 0; i < own.length; i++) [sorted.times[from + i], sorted.types[from + i]] = [times[own[i]!]!, types[own[i]!]!];
    }
  }
  return sorted;
}

/**
 * Each row's user numbered 0, 1… in order of first appearance, and each user's rows. By the
 * ids' places in [low, high] when they are dense enough (a Map of 4 million doubles cost 1.5 s
 * here, the array 0.05 s), by a Map otherwise.
 */
function numberedUsers({ users, length }: Rows, { low, high, every, placesPerRow }: Ids): { ordinalOf: Int32Array; ordinals: number; counts: Int32Array } {
  const places = Math.floor((high - low) / every) + 1;
  const byPlace = places <= placesPerRow * Math.max(length, 16_384) ? new Int32Array(places).fill(-1) : undefined;
  const byId = new Map<number, number>();
  const ordinalOf = new Int32Array(length);
  // At most one user per row.
  const counts = new Int32Array(length);
  let ordinals = 0;
  for (let i = 0; i < length; i++) {
    const place = byPlace ? Math.floor((users[i]! - low) / every) : 0;
    let ordinal = byPlace ? byPlace[place]! : (byId.get(users[i]!) ?? -1);
    if (ordinal < 0) {
      ordinal = ordinals++;
      if (byPlace) byPlace[place] = ordinal;
      else byId.set(users[i]!, ordinal);
    }
    ordinalOf[i] = ordinal;
    counts[ordinal]!++;
  }
  return { ordinalOf, ordinals, counts };
}
