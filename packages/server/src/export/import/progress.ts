// What `svc-server import` prints: on a terminal one progress line rewritten in place (events,
// hours, rate, ETA); otherwise a plain line every few seconds; and a summary at the end.
import type { ImportProgress, ImportSummary } from './run-import.js';

const TTY_INTERVAL_MS = 250;
const PLAIN_INTERVAL_MS = 5000;

const count = (n: number) => Math.round(n).toLocaleString('en-US');

function duration(seconds: number): string {
  const s = Math.round(seconds);
  const [h, m] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60)];
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}` : `${m}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * The progress line: events, hours, rate and the time left, from the gzip bytes read of those to
 * read (archives), else from the hours done (an Export API, whose sizes are known as they come).
 */
export function progressLine(progress: ImportProgress, now = Date.now()): string {
  const seconds = Math.max((now - progress.startedAt) / 1000, 0.001);
  const [done, total] = progress.bytesTotal > 0 ? [progress.bytesRead, progress.bytesTotal] : [progress.hoursDone, progress.hoursTotal];
  const left = done > 0 ? (seconds * (total - done)) / done : undefined;
  return `${count(progress.accepted)} events imported of ${count(progress.lines)} read, ${progress.hoursDone}/${progress.hoursTotal} hours, ${count(progress.accepted / seconds)} events/s, ETA ${left === undefined ? '?' : duration(left)}`;
}

/** A progress callback writing to `stream` (a TTY's line in place; plain lines otherwise), and its end. */
export function progressPrinter(stream: NodeJS.WriteStream): { onProgress: (progress: ImportProgress) => void; end: () => void } {
  const tty = stream.isTTY === true;
  let printedAt = 0;
  let shown = false;
  return {
    onProgress(progress) {
      const now = Date.now();
      if (now - printedAt < (tty ? TTY_INTERVAL_MS : PLAIN_INTERVAL_MS)) return;
      printedAt = now;
      if (tty) {
        stream.write(`\r${progressLine(progress, now)}\x1b[K`);
        shown = true;
      } else stream.write(`${progressLine(progress, now)}\n`);
    },
    end() {
      if (shown) stream.write('\n');
    },
  };
}

/** The summary: events sent, accepted and skipped (by reason), hours, time and rate. */
export function summaryLines(summary: ImportSummary): string[] {
  const skipped = [...summary.skipped.values()].reduce((sum, n) => sum + n, 0);
  const lines = [
    `${summary.interrupted ? 'import interrupted (run it again to resume)' : 'import done'}: ${count(summary.lines)} lines read, ${count(summary.sent)} events sent, ${count(summary.accepted)} stored (or already stored under their insert_id), ${count(skipped)} skipped`,
    `  ${summary.hoursDone}/${summary.hoursTotal} hours in ${summary.seconds.toFixed(1)} s, ${count(summary.accepted / Math.max(summary.seconds, 0.001))} events/s`,
  ];
  for (const [reason, n] of [...summary.skipped].sort((a, b) => b[1] - a[1])) lines.push(`  skipped ${count(n)}: ${reason}`);
  for (const problem of summary.problems) lines.push(`  problem: ${problem}`);
  lines.push(`  state: ${summary.statePath}`);
  return lines;
}
