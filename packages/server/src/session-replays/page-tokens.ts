// The opaque page tokens of the replay listings: base64url JSON of the position after the
// last item of a page (and, for replays, the sort order it was issued for).
import type { ReplayFilePosition, ReplayPosition } from './store.js';

export type SortOrder = 'asc' | 'desc';

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function decode(token: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export const replayPageToken = (order: SortOrder, after: ReplayPosition) => encode({ o: order, s: after.startMs, d: after.deviceId, i: after.sessionId });

/** The position and sort order of a replay page token; undefined when it is not one. */
export function readReplayPageToken(token: string): { order: SortOrder; after: ReplayPosition } | undefined {
  const { o, s, d, i } = decode(token) ?? {};
  if ((o !== 'asc' && o !== 'desc') || !Number.isSafeInteger(s) || typeof d !== 'string' || typeof i !== 'string') return undefined;
  return { order: o, after: { startMs: s as number, deviceId: d, sessionId: i } };
}

export const filePageToken = (replayId: string, after: ReplayFilePosition) => encode({ r: replayId, s: after.startMs, f: after.id });

/** The position of a file page token issued for `replayId`; undefined when it is not one. */
export function readFilePageToken(token: string, replayId: string): ReplayFilePosition | undefined {
  const { r, s, f } = decode(token) ?? {};
  if (r !== replayId || !Number.isSafeInteger(s) || !Number.isSafeInteger(f)) return undefined;
  return { startMs: s as number, id: f as number };
}
