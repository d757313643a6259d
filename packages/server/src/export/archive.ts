// The export's zip archive, written while it is sent: one gzip-compressed JSON-lines entry per
// hour, each entry's rows pulled from the engine a chunk at a time only when the archive reaches
// it, so that neither the export nor an hour of it is ever held in memory. yazl writes the
// entries with data descriptors (their sizes are known only at their end) and switches to ZIP64
// records where a size or an offset needs them.
import { pipeline, Readable } from 'node:stream';
import { constants, createGzip } from 'node:zlib';
import yazl from 'yazl';
import { type ExportRow, HOUR_MS } from '../store/exported-events.js';
import { exportLine } from './lines.js';

/**
 * Deflate's fastest level: the lines are JSON with the same keys on every line, which even level
 * 1 shrinks several times, and the level sets the export's throughput (gzip is most of its CPU).
 */
const GZIP_LEVEL = constants.Z_BEST_SPEED;

/** The entry of an hour: `<app_id>/<app_id>_<YYYY-MM-DD>_<H>#0.json.gz`, as the platform names its files. */
export function hourFileName(appId: number, hourMs: number): string {
  const date = new Date(hourMs);
  return `${appId}/${appId}_${date.toISOString().slice(0, 10)}_${date.getUTCHours()}#0.json.gz`;
}

/** The JSON lines of chunks of rows, one text per chunk. */
async function* linesOf(chunks: AsyncIterable<Record<string, unknown>[]>): AsyncIterable<string> {
  for await (const rows of chunks) {
    if (rows.length === 0) continue;
    let lines = '';
    for (const row of rows) lines += `${exportLine(row as ExportRow)}\n`;
    yield lines;
  }
}

/**
 * The archive of these hours of the project. `rowsOf` reads one hour's rows; it is called when
 * the archive reaches the hour. The archive stream fails (and the answer is cut) when reading
 * fails; when it is destroyed (the client went away), the hour being read is stopped.
 */
export function exportArchive(appId: number, hours: readonly number[], rowsOf: (fromMs: number, toMs: number) => AsyncIterable<Record<string, unknown>[]>): Readable {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as Readable;
  let reading: Readable | undefined;
  for (const hourMs of hours) {
    zip.addReadStreamLazy(hourFileName(appId, hourMs), { compress: false, mtime: new Date(hourMs + HOUR_MS) }, (done) => {
      // A byte stream (not objects) with a small high-water mark: one chunk of lines is read ahead at most.
      reading = Readable.from(linesOf(rowsOf(hourMs, hourMs + HOUR_MS)), { objectMode: false, highWaterMark: 64 * 1024 });
      const gzip = createGzip({ level: GZIP_LEVEL });
      pipeline(reading, gzip, (failure) => {
        if (failure && !output.destroyed) output.destroy(failure);
      });
      done(null, gzip);
    });
  }
  zip.end();
  output.once('close', () => reading?.destroy());
  return output;
}
