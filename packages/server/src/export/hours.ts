// The range of an export: hours of UTC written `YYYYMMDDTHH` (the hour with one or two digits,
// as the platform's own examples write it), both inclusive, at most 365 days.
import { HOUR_MS } from '../store/exported-events.js';

const HOUR_TEXT = /^(\d{4})(\d{2})(\d{2})T(\d{1,2})$/;
export const MAX_RANGE_DAYS = 365;

/** The start of the hour `text` names (ms since the epoch), or undefined when it names none. */
export function hourStart(text: string): number | undefined {
  const match = HOUR_TEXT.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour] = match.slice(1).map(Number) as [number, number, number, number];
  if (hour > 23) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour);
  const date = new Date(ms);
  // Date.UTC rolls 31 February over to March and reads years below 100 as 19xx: such a text names no hour.
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? ms : undefined;
}

/** The range [fromMs, toMs) of `start` to `end`, or what is wrong with them. */
export function exportRange(start: string, end: string): { fromMs: number; toMs: number } | { problem: string } {
  const fromMs = hourStart(start);
  if (fromMs === undefined) return { problem: `start (${start}) is not an hour written YYYYMMDDTHH (UTC, hour 0 to 23)` };
  const endMs = hourStart(end);
  if (endMs === undefined) return { problem: `end (${end}) is not an hour written YYYYMMDDTHH (UTC, hour 0 to 23)` };
  if (endMs < fromMs) return { problem: `end (${end}) is before start (${start})` };
  const toMs = endMs + HOUR_MS;
  if (toMs - fromMs > MAX_RANGE_DAYS * 24 * HOUR_MS) return { problem: `The range from ${start} to ${end} is longer than ${MAX_RANGE_DAYS} days` };
  return { fromMs, toMs };
}
