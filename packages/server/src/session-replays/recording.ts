// What the session-replay SDK sends and what the platform serves back: a batch's events
// checked and measured, and the event files in both formats of the file listing.
import { deflateSync, gzipSync } from 'node:zlib';

/** A batch of recorded events, checked: its time span and the JSON array of its events as sent. */
export interface RecordedBatch {
  startMs: number;
  endMs: number;
  events: string;
  count: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function recordedEvent(text: string): { timestamp: number } | undefined {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(event) || !Number.isSafeInteger(event.type) || (event.type as number) < 0 || !Number.isSafeInteger(event.timestamp) || !isObject(event.data)) return undefined;
  return { timestamp: event.timestamp as number };
}

/** The batch, or the problem with its first event that is not a recorded-session event. */
export function readBatch(events: readonly string[]): RecordedBatch | { problem: string } {
  let startMs = Infinity;
  let endMs = -Infinity;
  for (const [index, text] of events.entries()) {
    const event = recordedEvent(text);
    if (!event) return { problem: `events[${index}] is not a recorded-session event: it needs an integer type, an integer timestamp and a data object` };
    startMs = Math.min(startMs, event.timestamp);
    endMs = Math.max(endMs, event.timestamp);
  }
  // Each item is valid JSON, so joining them as sent keeps every event exactly as recorded.
  return { startMs, endMs, events: `[${events.join(',')}]`, count: events.length };
}

export type FileVersion = 2 | 3;

/**
 * An event file as the platform serves it: gzip of a JSON array of the events (version 3),
 * or of one packed string per event, the latin1 text of its zlib-compressed JSON (version 2).
 */
export function eventFile(events: string, version: FileVersion): Buffer {
  if (version === 3) return gzipSync(events);
  const packed = (JSON.parse(events) as unknown[]).map((event) => deflateSync(JSON.stringify(event)).toString('latin1'));
  return gzipSync(JSON.stringify(packed));
}
