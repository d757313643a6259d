// The project's events received in a range of hours, read from the Export API
// (`GET /api/2/export`) in the browser: a zip of one gzip-compressed JSON-lines file per hour,
// stored without further compression, read through its central directory, then inflated.
import { NotFoundError } from '@svc/client';
import { gunzipText } from '../gzip.js';
import type { Client } from '../session.js';

/** The fields of an exported event the live view shows. */
export interface ExportedEvent {
  uuid: string;
  event_type: string;
  user_id: string | null;
  device_id: string | null;
  /** `2026-11-20 05:04:03.123000`, UTC. */
  server_upload_time: string;
  event_time: string;
}

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const STORED = 0;

/** The bytes of each stored file of a zip, in its central directory's order. */
export function storedFiles(zip: Uint8Array): Uint8Array[] {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  // Without an archive comment (the service writes none) the directory's end is the last 22 bytes.
  const end = zip.length - 22;
  if (end < 0 || view.getUint32(end, true) !== END_OF_DIRECTORY) throw new TypeError('The export is not a zip archive.');
  const files: Uint8Array[] = [];
  let entry = view.getUint32(end + 16, true);
  for (let left = view.getUint16(end + 10, true); left > 0; left--) {
    if (view.getUint32(entry, true) !== DIRECTORY_ENTRY) throw new TypeError('The export’s zip directory is damaged.');
    if (view.getUint16(entry + 10, true) !== STORED) throw new TypeError('The export’s files are compressed in the zip: only stored files are read.');
    const size = view.getUint32(entry + 20, true);
    const header = view.getUint32(entry + 42, true);
    // The data follows the local header: 30 bytes, then its own name and extra field.
    const data = header + 30 + view.getUint16(header + 26, true) + view.getUint16(header + 28, true);
    files.push(zip.subarray(data, data + size));
    entry += 46 + view.getUint16(entry + 28, true) + view.getUint16(entry + 30, true) + view.getUint16(entry + 32, true);
  }
  return files;
}

/** `YYYYMMDDTHH` (UTC), the Export API's hours. */
export const exportHour = (ms: number) => new Date(ms).toISOString().slice(0, 13).replaceAll('-', '');

/** The events received from hour `fromMs` to hour `toMs` (UTC, both included); none when the project has none then (404). */
export async function exportedEvents(client: Client, fromMs: number, toMs: number): Promise<ExportedEvent[]> {
  let zip: ArrayBuffer;
  try {
    const { data } = await client.GET('/api/2/export', { params: { query: { start: exportHour(fromMs), end: exportHour(toMs) } }, parseAs: 'arrayBuffer' });
    zip = data as unknown as ArrayBuffer;
  } catch (error) {
    if (error instanceof NotFoundError) return [];
    throw error;
  }
  const texts = await Promise.all(storedFiles(new Uint8Array(zip)).map(gunzipText));
  return texts.flatMap((text) => text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as ExportedEvent));
}
