// Users (or events) per bucket of one kind of event, and over the range, from the engine's
// per-user timelines (store/timelines.ts), in the engine's thread: the answers of counts.ts's
// SQL for scans without properties, segment, conditions or other filters (a plain
// segmentation, active and new users) in one pass over each user's events of the range.
import { firstAtOrAfter, type ProjectTimelines } from '../../store/timelines.js';
import { matchesEventType } from '../query/model.js';
import { bucketPieces, type ReportRange } from '../time.js';

export interface TimelineCountsQuery {
  appId: number;
  timeZone: string;
  range: ReportRange;
  interval: 'day' | 'week' | 'month';
  /** The events counted: an event type (a name, `ce:<name>`), `_all` or `_active`. */
  eventType: string;
  measure: 'uniques' | 'totals';
  /** Only each user's first events ever (new users). */
  firstEventsOnly: boolean;
}

/** Per bucket of `bucketLabels(range, interval)`, and over the range. */
export interface TimelineCounts {
  perBucket: number[];
  whole: number;
}

export function timelineCounts(project: ProjectTimelines | undefined, query: TimelineCountsQuery): TimelineCounts {
  const { startMs, endMs } = query.range;
  const { starts, buckets } = bucketPieces(query.timeZone, query.range, query.interval);
  const matches = Uint8Array.from(project?.typeNames ?? [], (name) => (matchesEventType(query.eventType, name) ? 1 : 0));
  const bucketCount = Math.max(-1, ...buckets) + 1;
  const perBucket = new Float64Array(bucketCount);
  // The last user counted in each bucket (users are numbered as they come).
  const countedUser = new Int32Array(bucketCount).fill(-1);
  const uniques = query.measure === 'uniques';
  let whole = 0;
  let user = 0;
  for (const timeline of project?.users.values() ?? []) {
    user++;
    const { times, types } = timeline;
    // The events of the range (found by binary search: the loop then reads only the types of the others).
    let [i, to] = [firstAtOrAfter(timeline, startMs), firstAtOrAfter(timeline, endMs)];
    if (query.firstEventsOnly) {
      // The user's first events ever: those at the time of the first, when it is in the range.
      if (timeline.length === 0 || times[0]! < startMs || times[0]! >= endMs) continue;
      [i, to] = [0, 1];
      while (to < timeline.length && times[to] === times[0]) to++;
    }
    let piece = 0;
    let counted = false;
    while (i < to) {
      if (matches[types[i]!] === 0) {
        i++;
        continue;
      }
      while (times[i]! >= starts[piece + 1]!) piece++;
      const bucket = buckets[piece]!;
      counted = true;
      if (!uniques) {
        if (bucket >= 0) perBucket[bucket]!++;
        whole++;
        i++;
        continue;
      }
      if (bucket >= 0 && countedUser[bucket] !== user) {
        countedUser[bucket] = user;
        perBucket[bucket]!++;
      }
      // The user's other events of the piece count nothing more.
      i = Math.max(i + 1, firstAtOrAfter(timeline, starts[piece + 1]!));
    }
    if (counted && uniques) whole++;
  }
  return { perBucket: Array.from(perBucket), whole };
}
