/// <reference types="node" />
// Node-only module (node:zlib): the package build otherwise compiles without Node types.
// `for await` over a project's exported events: the range is asked for a part of a few hours at
// a time (GET /api/2/export answers a zip of one gzipped JSON-lines file per hour), the next part
// once the previous one's events are consumed.
import { gunzipSync, inflateRawSync } from 'node:zlib';
import { lenient, type AppClient } from './clients.js';
import { responseError } from './errors.js';
import type { ExportComponents } from './generated/roles.js';
import { signalInit, type ListOptions } from './paging.js';

/** One exported event, every field present (null where nothing is known). */
export type ExportedEvent = ExportComponents['schemas']['ExportedEvent'];

/** A part of an export range: its first and last hour (ms since epoch, UTC), both included. */
export interface ExportPart {
  startMs: number;
  endMs: number;
  /** `YYYYMMDDTHH` of its first and last hour, as the Export API takes them. */
  start: string;
  end: string;
  hours: number;
}

const HOUR_MS = 3_600_000;
const HOUR_TEXT = /^(\d{4})(\d{2})(\d{2})T(\d{2})$/;
/** The Export API's limit on one request: 365 days. */
export const MAX_EXPORT_HOURS = 365 * 24;

/** `YYYYMMDDTHH` (UTC) as ms since epoch; a RangeError naming `what` when it is no such hour. */
export function exportHourMs(text: string, what: string): number {
  const match = HOUR_TEXT.exec(text);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), Number(match[4])) : Number.NaN;
  if (!match || new Date(ms).toISOString().slice(0, 13) !== `${match[1]}-${match[2]}-${match[3]}T${match[4]}`) throw new RangeError(`${what} is an hour as YYYYMMDDTHH (UTC), e.g. 20260101T00; got ${JSON.stringify(text)}`);
  return ms;
}

/** An hour as the Export API takes it. */
export const exportHour = (ms: number): string => new Date(ms).toISOString().slice(0, 13).replace(/-/g, '');

export function exportPart(startMs: number, endMs: number): ExportPart {
  return { startMs, endMs, start: exportHour(startMs), end: exportHour(endMs), hours: (endMs - startMs) / HOUR_MS + 1 };
}

/** `start`…`end` (hours, both included) in parts of `partHours` (the last one shorter); RangeError on a bad range. */
export function exportParts(start: string, end: string, partHours = 24): ExportPart[] {
  const [first, last] = [exportHourMs(start, 'start'), exportHourMs(end, 'end')];
  if (last < first) throw new RangeError(`end (${end}) is an hour at or after start (${start})`);
  if (!(Number.isInteger(partHours) && partHours >= 1 && partHours <= MAX_EXPORT_HOURS)) throw new RangeError(`partHours is a whole number from 1 to ${MAX_EXPORT_HOURS}`);
  const parts: ExportPart[] = [];
  for (let at = first; at <= last; at += partHours * HOUR_MS) parts.push(exportPart(at, Math.min(last, at + (partHours - 1) * HOUR_MS)));
  return parts;
}

/** A part of several hours as two halves of whole hours (what to ask for when the part is refused as too large). */
export function exportHalves(part: ExportPart): [ExportPart, ExportPart] {
  const middle = part.startMs + Math.floor(part.hours / 2) * HOUR_MS;
  return [exportPart(part.startMs, middle - HOUR_MS), exportPart(middle, part.endMs)];
}

export interface ExportEventsOptions extends ListOptions {
  /** Hours asked for in one request (its zip is held in memory while its events are read); default 24. */
  partHours?: number;
}

/**
 * Every event the project received from `start` to `end` (hours `YYYYMMDDTHH`, UTC, both
 * included, by the time the service received them), part after part, in each archive's order
 * (hour after hour). A part without data (404) yields nothing; a part of several hours refused
 * with 400 (the 4 GB limit) is asked for in two halves; any other answer than 200 throws the
 * `ResponseError` of its status. The client's retries apply to each request.
 */
export async function* exportEvents(client: AppClient, start: string, end: string, options: ExportEventsOptions = {}): AsyncGenerator<ExportedEvent, void, undefined> {
  const parts = exportParts(start, end, options.partHours);
  while (parts.length > 0) {
    const part = parts.shift()!;
    const answer = await lenient(client).GET('/api/2/export', { params: { query: { start: part.start, end: part.end } }, parseAs: 'arrayBuffer', ...signalInit(options) });
    const { response } = answer;
    if (response.status === 404) continue;
    if (response.status === 400 && part.hours > 1) {
      parts.unshift(...exportHalves(part));
      continue;
    }
    const action = `exporting the events from ${part.start} to ${part.end}`;
    if (!response.ok || answer.data === undefined) throw responseError(action, response.status, answer.error, response.headers);
    for (const bytes of zipEntries(new Uint8Array(answer.data as ArrayBuffer), action)) {
      for (const line of gunzipSync(bytes).toString('utf8').split('\n')) if (line !== '') yield JSON.parse(line) as ExportedEvent;
    }
  }
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** The uncompressed bytes of each file of a zip, in its central directory's order (stored or deflated entries). */
export function* zipEntries(zip: Uint8Array, what = 'reading a zip'): Generator<Uint8Array, void, undefined> {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  // The end of central directory record: at the end, before a comment of at most 65535 bytes.
  let eocd = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 65_535); at--) {
    if (view.getUint32(at, true) === EOCD) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw new TypeError(`${what}: the answer is not a zip archive`);
  const count = view.getUint16(eocd + 10, true);
  let at = view.getUint32(eocd + 16, true);
  for (let i = 0; i < count; i++) {
    if (view.getUint32(at, true) !== CENTRAL) throw new TypeError(`${what}: the zip's central directory is damaged`);
    const [method, size] = [view.getUint16(at + 10, true), view.getUint32(at + 20, true)];
    const [nameLength, extraLength, commentLength] = [view.getUint16(at + 28, true), view.getUint16(at + 30, true), view.getUint16(at + 32, true)];
    const local = view.getUint32(at + 42, true);
    const name = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extraLength + commentLength;
    if (name.endsWith('/')) continue;
    if (view.getUint32(local, true) !== LOCAL) throw new TypeError(`${what}: the zip entry ${name} is damaged`);
    const data = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    const raw = zip.subarray(data, data + size);
    if (method === 0) yield raw;
    else if (method === 8) yield inflateRawSync(raw);
    else throw new TypeError(`${what}: the zip entry ${name} uses compression method ${method} (stored and deflated are read)`);
  }
}
