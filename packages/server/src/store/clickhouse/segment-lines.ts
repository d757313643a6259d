// A journal segment as the ClickHouse engine loads it: its lines kept as byte ranges of the
// file, scanned once for what the whole-segment steps need (read from the bytes, line-fields.ts;
// only the few lines the profile and hold steps read whole are parsed), planned (each kept
// line's ingest_seq and svc_id), then written a chunk at a time from their bytes into the
// events' INSERT (line-rows.ts).
import { timeSlicer } from '../../shared/time-slice.js';
import type { IdentityBatch } from '../identity.js';
import { EVENT_COLUMNS } from '../journal-line.js';
import type { HeldAttribution, StoredEvent } from '../types.js';
import type { EventRows, ResolvedEvent } from './events.js';
import { fieldIndex, LineFields } from './line-fields.js';
import { LineRowWriter } from './line-rows.js';
import { RowBinaryWriter } from './row-binary.js';

export type JournalLine = StoredEvent & { held_attribution?: HeldAttribution | null; released_attribution?: string | null };

const EVENT_FIELDS = Object.keys(EVENT_COLUMNS);

/** A journal line as a record with every event field (the line leaves null fields out); filled in place, no copies. */
function parseLine(text: string): JournalLine {
  const line = JSON.parse(text) as Record<string, unknown>;
  for (const field of EVENT_FIELDS) line[field] ??= null;
  return line as unknown as JournalLine;
}

/**
 * Lines of a segment encoded at a time while it loads (their rows' bytes are what a load holds
 * at once): fewer hold less memory, more save no time (scripts/bench/engines/segment-memory.mjs).
 */
export const LOAD_CHUNK_LINES = 2_000;
const NEWLINE = 0x0a;

/** A segment's non-empty lines, each a byte range of the file (read once, kept out of the JS heap). */
export class SegmentLines {
  readonly count: number;
  private readonly starts: Float64Array;
  private readonly ends: Float64Array;

  constructor(readonly bytes: Buffer) {
    let newlines = 0;
    for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) newlines++;
    this.starts = new Float64Array(newlines + 1);
    this.ends = new Float64Array(newlines + 1);
    let count = 0;
    for (let start = 0; start < bytes.length; ) {
      const newline = bytes.indexOf(NEWLINE, start);
      const end = newline === -1 ? bytes.length : newline;
      if (end > start) {
        this.starts[count] = start;
        this.ends[count++] = end;
      }
      start = end + 1;
    }
    this.count = count;
  }

  parse(index: number): JournalLine {
    return parseLine(this.bytes.toString('utf8', this.starts[index], this.ends[index]));
  }

  /** The line's fields, read into `fields`. */
  read(index: number, fields: LineFields): LineFields {
    return fields.read(this.bytes, this.starts[index]!, this.ends[index]!);
  }

  start(index: number): number {
    return this.starts[index]!;
  }

  end(index: number): number {
    return this.ends[index]!;
  }
}

/**
 * What the whole-segment steps (dedupe, identities, profiles, holds) need of each line, by
 * line index: columns of scalars, and whole only the few lines the profile and hold steps read.
 */
export interface SegmentScan {
  appIds: Int32Array;
  uploadTimes: Float64Array;
  insertIds: (string | null)[];
  userIds: (string | null)[];
  deviceIds: (string | null)[];
  held: Uint8Array;
  /** Held and released attributions, `$identify` and `$groupidentify` events. */
  whole: Map<number, JournalLine>;
}

const [APP_ID, INSERT_ID, EVENT_TYPE, USER_ID, DEVICE_ID, SERVER_UPLOAD_TIME, HELD_ATTRIBUTION, RELEASED_ATTRIBUTION] = (
  ['app_id', 'insert_id', 'event_type', 'user_id', 'device_id', 'server_upload_time', 'held_attribution', 'released_attribution'] as const
).map(fieldIndex) as [number, number, number, number, number, number, number, number];
/** Events whose properties set profiles: their lines are read whole. */
const PROFILE_EVENT_TYPES = new Set(['$identify', '$groupidentify']);

export async function scanSegment(lines: SegmentLines): Promise<SegmentScan> {
  const slice = timeSlicer();
  const scan: SegmentScan = {
    appIds: new Int32Array(lines.count),
    uploadTimes: new Float64Array(lines.count),
    insertIds: new Array<string | null>(lines.count),
    userIds: new Array<string | null>(lines.count),
    deviceIds: new Array<string | null>(lines.count),
    held: new Uint8Array(lines.count),
    whole: new Map(),
  };
  const fields = new LineFields();
  for (let index = 0; index < lines.count; index++) {
    lines.read(index, fields);
    const held = !fields.isNull(HELD_ATTRIBUTION);
    const whole = held || !fields.isNull(RELEASED_ATTRIBUTION) || PROFILE_EVENT_TYPES.has(fields.string(EVENT_TYPE) ?? '') ? lines.parse(index) : undefined;
    if (whole) scan.whole.set(index, whole);
    // A held attribution's line is no event: its project is the hold's.
    scan.appIds[index] = held ? whole!.held_attribution!.app_id : fields.number(APP_ID)!;
    scan.uploadTimes[index] = fields.number(SERVER_UPLOAD_TIME) ?? 0;
    scan.insertIds[index] = fields.string(INSERT_ID);
    scan.userIds[index] = fields.string(USER_ID);
    scan.deviceIds[index] = fields.string(DEVICE_ID);
    scan.held[index] = held ? 1 : 0;
    // Awaited only when the slice is over: an await per line cost a turn of microtasks each.
    const pause = slice(index);
    if (pause) await pause;
  }
  return scan;
}

/** The segment's lines of each project (1: the project's), by app id in ascending order: a segment loads one project at a time. */
export function linesByProject(scan: SegmentScan): Map<number, Uint8Array> {
  const projects = new Map<number, Uint8Array>();
  for (const appId of [...new Set(scan.appIds)].sort((a, b) => a - b)) projects.set(appId, new Uint8Array(scan.appIds.length));
  scan.appIds.forEach((appId, index) => (projects.get(appId)![index] = 1));
  return projects;
}

/** Where each kept line goes, by line index: its ingest_seq (0: dropped as a repeat) and svc_id (NaN: none). */
export interface SegmentPlan {
  ingestSeqs: Float64Array;
  svcIds: Float64Array;
  held: Uint8Array;
}

/**
 * The kept lines' ingest_seqs after `lastIngestSeq` (held ones take theirs too) and canonical
 * svc_ids resolved in `batch`; how many are events; the last ingest_seq.
 */
export async function planSegment(scan: SegmentScan, kept: Uint8Array, batch: IdentityBatch, lastIngestSeq: number): Promise<{ plan: SegmentPlan; eventCount: number; version: number }> {
  const slice = timeSlicer();
  const plan: SegmentPlan = { ingestSeqs: new Float64Array(kept.length), svcIds: new Float64Array(kept.length).fill(Number.NaN), held: scan.held };
  let version = lastIngestSeq;
  let eventCount = 0;
  for (let index = 0; index < kept.length; index++) {
    const pause = slice(index);
    if (pause) await pause;
    if (kept[index] === 0) continue;
    plan.ingestSeqs[index] = ++version;
    if (scan.held[index] === 1) continue;
    plan.svcIds[index] = batch.resolve(scan.appIds[index]!, scan.userIds[index] ?? null, scan.deviceIds[index] ?? null) ?? Number.NaN;
    eventCount++;
  }
  // Canonical only once the whole segment's merges are known.
  for (let index = 0; index < kept.length; index++) if (!Number.isNaN(plan.svcIds[index])) plan.svcIds[index] = batch.canonical(plan.svcIds[index]!);
  return { plan, eventCount, version };
}

export const isEvent = (plan: SegmentPlan, index: number) => plan.ingestSeqs[index] !== 0 && plan.held[index] === 0;

/** The line as the event inserted. */
export function resolvedEvent(line: JournalLine, plan: SegmentPlan, index: number): ResolvedEvent {
  // The line itself becomes the event the profile steps read.
  const event = line as JournalLine & ResolvedEvent;
  const svcId = plan.svcIds[index]!;
  event.svc_id = Number.isNaN(svcId) ? null : svcId;
  event.ingest_seq = plan.ingestSeqs[index]!;
  return event;
}

/**
 * Room for rows per byte of their lines: a row holds its line's values without the keys, and
 * the properties' text again split (the bench's segment: 1.12 bytes of rows per byte of lines).
 */
const ROW_BYTES_PER_LINE_BYTE = 1.25;

/** Told of each row as it is encoded: its user, time and event type. */
export type RowSeen = (svcId: number | null, time: number, eventType: string) => void;

/** The segment's events as the rows of one insert, their lines' bytes encoded a chunk of lines at a time. */
export function segmentRows(lines: SegmentLines, plan: SegmentPlan, eventCount: number, chunkLines: number, segment: string, onRow?: RowSeen): EventRows {
  const svcIdOf = (index: number) => (Number.isNaN(plan.svcIds[index]) ? null : plan.svcIds[index]!);
  const rows = new LineRowWriter(segment);
  async function* chunks() {
    for (let from = 0; from < lines.count; from += chunkLines) {
      const events: number[] = [];
      for (let index = from; index < Math.min(lines.count, from + chunkLines); index++) if (isEvent(plan, index)) events.push(index);
      yield events;
    }
  }
  return {
    count: eventCount,
    chunks: chunks(),
    svcIdOf,
    encode(indexes) {
      // Room for the chunk's rows at once: a buffer doubled into from 64 KiB made twice their bytes of garbage.
      let lineBytes = 0;
      for (const index of indexes) lineBytes += lines.end(index) - lines.start(index);
      const writer = new RowBinaryWriter(Math.ceil(lineBytes * ROW_BYTES_PER_LINE_BYTE));
      for (const index of indexes) {
        rows.write(writer, lines.bytes, lines.start(index), lines.end(index), svcIdOf(index), plan.ingestSeqs[index]!);
        onRow?.(svcIdOf(index), rows.time(), rows.eventType());
      }
      return writer.bytes();
    },
  };
}
