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

/**
 * The times at which steps 1..k+1 were all done, along the events `nextOf` picks for each
 * step after the previous pick (-1: none, the path ends there).
 */
function walk(events: UserEvents, entry: number, steps: number, nextOf: (step: number, previous: number) => number): number[] {
  const completedAt = [events.times[entry]!];
  for (let step = 1, previous = entry; step < steps; step++) {
    previous = nextOf(step, previous);
    if (previous < 0) break;
    completedAt.push(Math.max(completedAt.at(-1)!, events.times[previous]!));
  }
  return completedAt;
}

function unorderedPath(events: UserEvents, entry: number, steps: number, windowMs: number): FunnelPath {
  const { times, masks } = events;
  const start = times[entry]!;
  const firstOf = (step: number) => times.findIndex((time, j) => j !== entry && time >= start && time <= start + windowMs && matches(masks[j]!, step));
  return { entry, completedAt: walk(events, entry, steps, firstOf) };
}

/** The first step an event matches (`steps` when none): same-time events count in step order. */
function firstStep(mask: number, steps: number): number {
  for (let step = 0; step < steps; step++) if (matches(mask, step)) return step;
  return steps;
}

/**
 * An ordered or sequential path, as the engine's chain of "next event" joins finds it
 * (runners/funnels.ts, for engines without those joins): from the entry, the first later event
 * of step 2 (later: by time, then by first step; sequential: the very next event, which must be
 * of step 2), then of step 3 after it…; the steps done within the window count.
 */
function chainedPath(events: UserEvents, entry: number, steps: number, windowMs: number, sequential: boolean): FunnelPath {
  const { times, masks } = events;
  const nextOf = (step: number, previous: number) => {
    if (sequential) return previous + 1 < times.length && matches(masks[previous + 1]!, step) ? previous + 1 : -1;
    const first = firstStep(masks[previous]!, steps);
    for (let j = previous + 1; j < times.length; j++) {
      if ((times[j]! > times[previous]! || firstStep(masks[j]!, steps) > first) && matches(masks[j]!, step)) return j;
    }
    return -1;
  };
  const completedAt = walk(events, entry, steps, nextOf);
  const within = completedAt.findIndex((time) => time > times[entry]! + windowMs);
  return { entry, completedAt: within < 0 ? completedAt : completedAt.slice(0, within) };
}

export type PathMode = 'ordered' | 'unordered' | 'sequential';

/** The winning path among `entries` (furthest, then earliest); undefined without entries. */
export function bestPath(events: UserEvents, entries: number[], steps: number, windowMs: number, mode: PathMode = 'unordered'): FunnelPath | undefined {
  let best: FunnelPath | undefined;
  for (const entry of entries) {
    const path = mode === 'unordered' ? unorderedPath(events, entry, steps, windowMs) : chainedPath(events, entry, steps, windowMs, mode === 'sequential');
    if (!best || path.completedAt.length > best.completedAt.length) best = path;
    if (best.completedAt.length === steps) break;
  }
  return best;
}
