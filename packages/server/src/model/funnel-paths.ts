// One user's way through an unordered funnel (SEMANTICS.md, `/api/2/funnels`; ordered and
// sequential funnels are computed by the engine, runners/funnels.ts): every occurrence of
// step 1 in the range is a possible entry; the entry reaching the furthest step wins, the
// earliest among equals. Events come ordered by time, then by the first step they match.

/** A user's events that matter: time (ms), which steps each matches (bit k = step k), and whether it may enter. */
export interface UserEvents {
  times: number[];
  masks: number[];
  /** Index of the events that may be an entry (step 1 within the range). */
  entries: number[];
}

/** How far one entry got: the index of the event that reached each step, and when each step was completed. */
export interface FunnelPath {
  entry: number;
  /** completedAt[k]: time at which steps 1..k+1 were all done. */
  completedAt: number[];
}

const matches = (mask: number, step: number) => (mask & (1 << step)) !== 0;

function unorderedPath(events: UserEvents, entry: number, steps: number, windowMs: number): FunnelPath {
  const { times, masks } = events;
  const start = times[entry]!;
  const completedAt = [start];
  let done = start;
  for (let step = 1; step < steps; step++) {
    let first = -1;
    for (let j = 0; j < times.length; j++) {
      if (j !== entry && times[j]! >= start && times[j]! <= start + windowMs && matches(masks[j]!, step)) {
        first = j;
        break;
      }
    }
    if (first < 0) break;
    done = Math.max(done, times[first]!);
    completedAt.push(done);
  }
  return { entry, completedAt };
}

/** The winning path among `entries` (furthest, then earliest); undefined without entries. */
export function bestPath(events: UserEvents, entries: number[], steps: number, windowMs: number): FunnelPath | undefined {
  let best: FunnelPath | undefined;
  for (const entry of entries) {
    const path = unorderedPath(events, entry, steps, windowMs);
    if (!best || path.completedAt.length > best.completedAt.length) best = path;
    if (best.completedAt.length === steps) break;
  }
  return best;
}
