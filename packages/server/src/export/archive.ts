// The export's zip archive, written while it is sent: one gzip-compressed JSON-lines entry per
// hour, each entry's rows pulled from the engine a chunk at a time only when the archive reaches
// it, so that neither the export nor an hour of it is ever held in memory. yazl writes the
// entries with data descriptors (their sizes are known only at their end) and switches to ZIP64
// records where a size or an offset needs them.
import { pipeline, Readable } from 'node:stream';
import { constants, createGzip } from 'node:zlib';
import yazl from 'yazl';
import { HOUR_MS } from '../store/exported-events.js';

/**
 * Deflate's fastest level: the lines are JSON with the same keys on every line, which even level
 * 1 shrinks several times, and the level sets the export's throughput (gzip is most of its CPU).
 */
const GZIP_LEVEL = constants.Z_BEST_SPEED;
/** The lines read ahead of gzip, bytes: about three of the engine's chunks. */
const READ_AHEAD_BYTES = 8 * 1024 * 1024;

/** The entry of an hour: `<app_id>/<app_id>_<YYYY-MM-DD>_<H>#0.json.gz`, as the platform names its files. */
export function hourFileName(appId: number, hourMs: number): string {
  const date = new Date(hourMs);
  return `${appId}/${appId}_${date.toISOString().slice(0, 10)}_${date.getUTCHours()}#0.json.gz`;
}

/**
 * The archive of these hours of the project. `linesOf` reads one hour's lines (texts of whole
 * lines); it is called when the archive reaches the hour. The archive stream fails (and the answer is cut) when reading
 * fails; when it is destroyed (the client went away), the hour being read is stopped.
 */
export function exportArchive(appId: number, hours: readonly number[], linesOf: (fromMs: number, toMs: number) => AsyncIterable<string>): Readable {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as Readable;
  let reading: Readable | undefined;
  for (const hourMs of hours) {
    zip.addReadStreamLazy(hourFileName(appId, hourMs), { compress: false, mtime: new Date(hourMs + HOUR_MS) }, (done) => {
      // A byte stream (not objects) that reads a few chunks (about 2.4 MB each) ahead: the engine
      // writes the next ones while gzip compresses this one, and memory stays bounded by them.
      reading = Readable.from(linesOf(hourMs, hourMs + HOUR_MS), { objectMode: false, highWaterMark: READ_AHEAD_BYTES });
      const gzip = createGzip({ level: GZIP_LEVEL });
      pipeline(reading, gzip, (failure) => {
        if (failure && !output.destroyed) output.destroy(failure);
      });
      done(null, gzip);
    });
  }
  zip.end();
  // yazl reports a failed entry on the ZipFile itself: unheard, it would end the process.
  zip.on('error', (failure: Error) => output.destroy(failure));
  output.once('close', () => reading?.destroy());
  return output;
}
