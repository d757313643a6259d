// Importing straight from a project's Export API (the platform's, or this server's): the range
// asked for in parts of a few hours, each part's zip downloaded to a temporary file (a zip is
// read from its central directory, at its end) and read as an archive. 404 is a part without
// data; a 400 on a part of several hours (the 4 GB limit) splits it in two; 429, 5xx and
// failed connections are retried; a refused key stops the import.
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import { againOf, ImportError, retried, type RetryOptions } from './retrying.js';

export interface ExportApiSource {
  /** The host serving `GET /api/2/export`, e.g. https://amplitude.com or http://127.0.0.1:8000. */
  url: string;
  apiKey: string;
  secretKey: string;
  /** The first and last hour, `YYYYMMDDTHH` (UTC, both included, as the Export API takes them). */
  start: string;
  end: string;
  /** Hours asked for in one request; default 24. */
  partHours?: number;
}

/** A part of the range: its first and last hour (ms since epoch, UTC) and its name in the state file. */
export interface ExportPart {
  name: string;
  startMs: number;
  endMs: number;
  hours: number;
}

const HOUR_MS = 3_600_000;
const HOUR_TEXT = /^(\d{4})(\d{2})(\d{2})T(\d{2})$/;
/** The Export API's limit on one request. */
export const MAX_PART_HOURS = 365 * 24;

/** `YYYYMMDDTHH` as ms since epoch (UTC), or an error naming `option`. */
export function hourOf(text: string, option: string): number {
  const match = HOUR_TEXT.exec(text);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), Number(match[4])) : Number.NaN;
  if (!match || new Date(ms).toISOString().slice(0, 13) !== `${match[1]}-${match[2]}-${match[3]}T${match[4]}`) throw new ImportError(`--${option} is an hour as YYYYMMDDTHH (UTC), e.g. 20260101T00`);
  return ms;
}

const hourText = (ms: number) => new Date(ms).toISOString().slice(0, 13).replace(/-/g, '');

export function partOf(startMs: number, endMs: number): ExportPart {
  return { name: `export ${hourText(startMs)}-${hourText(endMs)}`, startMs, endMs, hours: (endMs - startMs) / HOUR_MS + 1 };
}

/** The range in parts of `partHours` (the last one shorter). */
export function exportParts(source: ExportApiSource): ExportPart[] {
  const [first, last] = [hourOf(source.start, 'start'), hourOf(source.end, 'end')];
  if (last < first) throw new ImportError('--end is an hour at or after --start');
  const partHours = source.partHours ?? 24;
  if (!(Number.isInteger(partHours) && partHours >= 1 && partHours <= MAX_PART_HOURS)) throw new ImportError(`--part-hours is a whole number from 1 to ${MAX_PART_HOURS}`);
  const parts: ExportPart[] = [];
  for (let at = first; at <= last; at += partHours * HOUR_MS) parts.push(partOf(at, Math.min(last, at + (partHours - 1) * HOUR_MS)));
  return parts;
}

/** A part split in two halves of whole hours. */
export function halves(part: ExportPart): [ExportPart, ExportPart] {
  const middle = part.startMs + Math.floor(part.hours / 2) * HOUR_MS;
  return [partOf(part.startMs, middle - HOUR_MS), partOf(middle, part.endMs)];
}

export type Download = { file: string; size: number } | { empty: true } | { tooLarge: string };

/** Downloads a part's zip to `file`: its size, or that the part has no data, or the 400 of a part too large. */
export function downloadPart(source: ExportApiSource, part: ExportPart, file: string, options: RetryOptions): Promise<Download> {
  const url = `${source.url}/api/2/export?start=${hourText(part.startMs)}&end=${hourText(part.endMs)}`;
  const authorization = `Basic ${Buffer.from(`${source.apiKey}:${source.secretKey}`).toString('base64')}`;
  return retried(url, options, async () => {
    const response = await fetch(url, { headers: { authorization }, signal: options.signal });
    if (response.status === 200 && response.body) {
      await pipeline(Readable.fromWeb(response.body as ReadableStream), createWriteStream(file));
      return { file, size: (await stat(file)).size };
    }
    const error = errorOf(await response.text());
    if (response.status === 404) return { empty: true } as const;
    if (response.status === 401 || response.status === 403) throw new ImportError(`${url} answered ${response.status} (${error}): the source refused the API key and secret key`);
    const again = againOf(response, error);
    if (again) return again;
    if (response.status === 400 && part.hours > 1) return { tooLarge: error };
    throw new ImportError(`${url} answered ${response.status} (${error})`);
  });
}

/** The `error` of a JSON error body, else the body's start. */
function errorOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') return body.error;
  } catch {
    // Not JSON: the text itself.
  }
  return text.slice(0, 200);
}
