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
import { exportParts, type ExportPart } from '@svc/client';
import { againOf, ImportError, retried, type RetryOptions } from './retrying.js';
import { fingerprint } from './state.js';

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

/** The range in parts of `partHours` (the last one shorter); an ImportError when it is no range of hours. */
export function exportApiParts(source: ExportApiSource): ExportPart[] {
  try {
    return exportParts(source.start, source.end, source.partHours);
  } catch (failure) {
    throw new ImportError((failure as Error).message);
  }
}

/**
 * A part's name in the state file: with a fingerprint of the source's API key (not the key),
 * so that another source project's parts are never taken for done ones.
 */
export const partName = (source: ExportApiSource, part: ExportPart) => `export key ${fingerprint(source.apiKey)} ${part.start}-${part.end}`;

export type Download = { file: string; size: number } | { empty: true } | { tooLarge: string };

/** Downloads a part's zip to `file`: its size, or that the part has no data, or the 400 of a part too large. */
export function downloadPart(source: ExportApiSource, part: ExportPart, file: string, options: RetryOptions): Promise<Download> {
  const url = `${source.url}/api/2/export?start=${part.start}&end=${part.end}`;
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
