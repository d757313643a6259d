// Users (or events) per bucket of one kind of event, and over the range, from the engine's
// per-user timelines (store/timelines/timelines.ts), in the engine's thread: the answers of counts.ts's
// SQL for scans without properties, segment, conditions or other filters (a plain
// segmentation, active and new users) in one pass over each user's events of the range: of
// one event type, over its events only (the project's columns, changed users' runs by type).
import { firstAtOrAfter, type ProjectTimelines, typeRuns } from './timelines.js';
import { matchesEventType } from '../../model/query.js';
import { type BucketPieces, bucketPieces, type ReportRange } from '../../model/time.js';

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

/** Counts per bucket and over the range, one user at a time, each user's events in runs in time order. */
class Tally {
  readonly perBucket: Float64Array;
  whole = 0;
  /** The last user counted in each bucket (users are numbered as they come). */
  private readonly countedUser: Int32Array;
  private user = 0;
  private counted = false;
  private piece = 0;

  private readonly starts: Float64Array;
  private readonly buckets: Int32Array;

  constructor(
    { starts, buckets }: BucketPieces,
    private readonly uniques: boolean,
    private readonly startMs: number,
    private readonly endMs: number,
  ) {
    [this.starts, this.buckets] = [starts, buckets];
    const bucketCount = Math.max(-1, ...buckets) + 1;
    this.perBucket = new Float64Array(bucketCount);
    this.countedUser = new Int32Array(bucketCount).fill(-1);
  }

  /** The counts, once every user is counted. */
  counts(): TimelineCounts {
    this.nextUser();
    return { perBucket: Array.from(this.perBucket), whole: this.whole };
  }

  nextUser(): void {
    if (this.counted && this.uniques) this.whole++;
    this.counted = false;
    this.user++;
  }

  /** Before a run of a user's events in time order. */
  startRun(): void {
    this.piece = 0;
  }

  /**
   * Counts the events of `times[from..to)` (one user's, in time order) in the range, a bucket
   * piece at a time: each piece's events are found by binary search, not read one by one.
   */
  countRun(times: Float64Array, from: number, to: number): void {
    this.startRun();
    const end = firstAtOrAfter(times, from, to, this.endMs);
    for (let i = firstAtOrAfter(times, from, end, this.startMs); i < end; ) {
      const pieceEnd = this.enter(times[i]!);
      const next = firstAtOrAfter(times, i + 1, end, pieceEnd);
      this.addEvents(next - i);
      i = next;
    }
  }

  /** Moves to the piece of an event's time (times come in order within a run); its end. */
  enter(time: number): number {
    while (time >= this.starts[this.piece + 1]!) this.piece++;
    return this.starts[this.piece + 1]!;
  }

  /** Counts `events` (at least one) of the current piece. */
  addEvents(events: number): void {
    const bucket = this.buckets[this.piece]!;
    this.counted = true;
    if (!this.uniques) {
      if (bucket >= 0) this.perBucket[bucket]! += events;
      this.whole += events;
    } else if (bucket >= 0 && this.countedUser[bucket] !== this.user) {
      this.countedUser[bucket] = this.user;
      this.perBucket[bucket]!++;
    }
  }

  /** Counts an event; the time before which the user's next events of the run count nothing more (uniques: the piece's end). */
  add(time: number): number {
    const pieceEnd = this.enter(time);
    this.addEvents(1);
    return this.uniques ? pieceEnd : time;
  }
}

export function timelineCounts(project: ProjectTimelines | undefined, query: TimelineCountsQuery): TimelineCounts {
  const { startMs, endMs } = query.range;
  const matches = Uint8Array.from(project?.typeNames ?? [], (name) => (matchesEventType(query.eventType, name) ? 1 : 0));
  const tally = new Tally(bucketPieces(query.timeZone, query.range, query.interval), query.measure === 'uniques', startMs, endMs);
  if (!project) return tally.counts();
  const types = matches.reduce((found: number[], match, type) => (match === 0 ? found : [...found, type]), []);
  if (!query.firstEventsOnly && types.length <= 1) {
    // One type: its events only, the build's users' from its columns, the others' from their runs by type.
    const column = project.columns?.byType[types[0] ?? -1];
    if (column) {
      const { users, starts, times } = column;
      for (let u = 0; u < users.length; u++) {
        if (project.columns!.stale[users[u]!] !== 0) continue;
        tally.nextUser();
        tally.countRun(times, starts[u]!, starts[u + 1]!);
      }
    }
    for (const timeline of project.looseTimelines()) {
      tally.nextUser();
      const runs = typeRuns(timeline);
      const r = runs.types.indexOf(types[0] ?? -1);
      if (r >= 0) tally.countRun(runs.times, r === 0 ? 0 : runs.ends[r - 1]!, runs.ends[r]!);
    }
    return tally.counts();
  }
  // Every type counted (`_all`, or `_active` of a project without inactive events): no type to read.
  const everyType = !query.firstEventsOnly && matches.every((match) => match === 1);
  for (const timeline of project.users.values()) {
    tally.nextUser();
    const { times, length } = timeline;
    if (everyType) {
      tally.countRun(times, 0, length);
      continue;
    }
    // The events of the range (found by binary search: the loop then reads only the types of the others).
    let [i, to] = [firstAtOrAfter(times, 0, length, startMs), firstAtOrAfter(times, 0, length, endMs)];
    if (query.firstEventsOnly) {
      // The user's first events ever: those at the time of the first, when it is in the range.
      if (length === 0 || times[0]! < startMs || times[0]! >= endMs) continue;
      [i, to] = [0, 1];
      while (to < length && times[to] === times[0]) to++;
    }
    tally.startRun();
    while (i < to) {
      if (matches[timeline.types[i]!] === 0) {
        i++;
        continue;
      }
      const time = times[i]!;
      const countsFrom = tally.add(time);
      i = countsFrom > time ? Math.max(i + 1, firstAtOrAfter(times, 0, length, countsFrom)) : i + 1;
    }
  }
  return tally.counts();
}
