// One user's way through a funnel (SEMANTICS.md, `/api/2/funnels`): every occurrence of step
// 1 in the range is a possible entry; the entry reaching the furthest step wins, the
// earliest among equals. Events come ordered by time, then by the first step they match,
// so that events of the same time count in step order.

export type FunnelMode = 'ordered' | 'unordered' | 'sequential';

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

function orderedPath(events: UserEvents, entry: number, steps: number, windowMs: number, sequential: boolean): FunnelPath {
  const { times, masks } = events;
  const deadline = times[entry]! + windowMs;
  const completedAt = [times[entry]!];
  let previous = entry;
  for (let step = 1; step < steps; step++) {
    let found = -1;
    if (sequential) {
      // The very next event of the user must be the step.
      const next = previous + 1;
      if (next < times.length && times[next]! <= deadline && matches(masks[next]!, step)) found = next;
    } else {
      for (let j = previous + 1; j < times.length && times[j]! <= deadline; j++) {
        if (matches(masks[j]!, step)) {
          found = j;
          break;
        }
      }
    }
    if (found < 0) break;
    completedAt.push(times[found]!);
    previous = found;
  }
  return { entry, completedAt };
}

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

export function pathOf(events: UserEvents, entry: number, steps: number, windowMs: number, mode: FunnelMode): FunnelPath {
  return mode === 'unordered' ? unorderedPath(events, entry, steps, windowMs) : orderedPath(events, entry, steps, windowMs, mode === 'sequential');
}

/** The winning path among `entries` (furthest, then earliest); undefined without entries. */
export function bestPath(events: UserEvents, entries: number[], steps: number, windowMs: number, mode: FunnelMode): FunnelPath | undefined {
  let best: FunnelPath | undefined;
  for (const entry of entries) {
    const path = pathOf(events, entry, steps, windowMs, mode);
    if (!best || path.completedAt.length > best.completedAt.length) best = path;
    if (best.completedAt.length === steps) break;
  }
  return best;
}
