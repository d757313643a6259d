// Plain funnels over the engine's per-user timelines (store/timelines.ts), in the engine's
// thread: the same answers as the SQL of runners/funnels.ts (SEMANTICS.md, `/api/2/funnels`)
// in one pass over each user's events in the scanned range, [start, end + window). Events
// count in the SQL's order: by time, then the first step they match, then ingestion.
import { bestPath } from '../funnel-paths.js';
import { matchesEventType, NONE } from '../query/model.js';
import { bucketAt, bucketPieces, type ReportRange } from '../time.js';
import { add, addUnorderedUser, emptyGroupTimes, type FunnelGroup, type FunnelMode, summarizedGroup, windowMsOf } from './funnels.js';
import { firstAtOrAfter, type ProjectTimelines, type Timeline } from '../../store/timelines.js';

export interface TimelineFunnelQuery {
  appId: number;
  timeZone: string;
  range: ReportRange;
  /** The steps' event types (a name, `ce:<name>`, `_all` or `_active`). */
  eventTypes: string[];
  mode: FunnelMode;
  windowSeconds: number;
}

/**
 * One user's events of the scanned range in the funnel's order at a time (times, step masks:
 * bit k for step k, first steps), in arrays reused from user to user, and how far each entry gets.
 */
class UserSteps {
  times = new Float64Array(1024);
  masks = new Int32Array(1024);
  firsts = new Int32Array(1024);
  length = 0;
  /** Ordered funnels: per later step, where the search for its next event resumes (entries come in order, so do their paths). */
  private readonly resume: Int32Array;

  constructor(
    private readonly steps: number,
    private readonly sequential: boolean,
    private readonly windowMs: number,
  ) {
    this.resume = new Int32Array(steps);
  }

  /** The timeline's events in [fromMs, toMs) of a step (every one, sequential funnels); the number of entries (step 1 before `entriesEndMs`). */
  collect(timeline: Timeline, fromMs: number, toMs: number, entriesEndMs: number, masksOfType: Int32Array, firstsOfType: Int32Array): number {
    const times = timeline.times;
    const types = timeline.types;
    const keepAll = this.sequential;
    let outTimes = this.times;
    let outMasks = this.masks;
    let outFirsts = this.firsts;
    let length = 0;
    let entries = 0;
    // The events of [fromMs, toMs) by binary search: the loop reads only the types of the events it skips.
    const end = firstAtOrAfter(timeline, toMs);
    for (let i = firstAtOrAfter(timeline, fromMs); i < end; i++) {
      const type = types[i]!;
      const mask = masksOfType[type]!;
      // A sequential funnel keeps every event: none may come between two steps.
      if (mask === 0 && !keepAll) continue;
      const time = times[i]!;
      if (length === outTimes.length) {
        this.grow();
        outTimes = this.times;
        outMasks = this.masks;
        outFirsts = this.firsts;
      }
      outTimes[length] = time;
      outMasks[length] = mask;
      outFirsts[length++] = firstsOfType[type]!;
      if ((mask & 1) !== 0 && time < entriesEndMs) entries++;
    }
    this.length = length;
    this.resume.fill(0);
    return entries;
  }

  private grow(): void {
    const size = this.times.length * 2;
    const [times, masks, firsts] = [new Float64Array(size), new Int32Array(size), new Int32Array(size)];
    times.set(this.times);
    masks.set(this.masks);
    firsts.set(this.firsts);
    [this.times, this.masks, this.firsts] = [times, masks, firsts];
  }

  /** Events of the same time by first step (a stable insertion sort: the timeline has them by time, then ingestion). */
  sortSameTimes(): void {
    const { times, masks, firsts } = this;
    for (let i = 1; i < this.length; i++) {
      if (times[i - 1] !== times[i] || firsts[i - 1]! <= firsts[i]!) continue;
      const mask = masks[i]!;
      const first = firsts[i]!;
      let j = i - 1;
      while (j >= 0 && times[j] === times[i] && firsts[j]! > first) {
        masks[j + 1] = masks[j]!;
        firsts[j + 1] = firsts[j]!;
        j--;
      }
      masks[j + 1] = mask;
      firsts[j + 1] = first;
    }
  }

  /**
   * How far the entry at `entry` gets, the time each step was reached in `reached`. Ordered:
   * from each step's event, the first event of the next step after it (events of the same time
   * and first step are one moment: none follows another); sequential: the very next event.
   * Entries must come in order.
   */
  follow(entry: number, reached: Float64Array): number {
    const { steps, times, masks, firsts, length } = this;
    const t0 = times[entry]!;
    reached[0] = t0;
    let at = entry;
    for (let k = 1; k < steps; k++) {
      const bit = 1 << k;
      const previous = at;
      if (this.sequential) at = at + 1 < length && (masks[at + 1]! & bit) !== 0 ? at + 1 : length;
      else {
        at = Math.max(this.resume[k]!, previous + 1);
        while (at < length && ((masks[at]! & bit) === 0 || (times[at] === times[previous] && firsts[at] === firsts[previous]))) at++;
        this.resume[k] = at;
      }
      if (at === length || times[at]! > t0 + this.windowMs) return k;
      reached[k] = times[at]!;
    }
    return steps;
  }
}

/**
 * The funnel's groups (one, `(none)`, or none without entrants) from the project's timelines,
 * as funnels.ts's `chainedGroups` / `unorderedGroups` give them.
 */
export function timelineFunnel(project: ProjectTimelines | undefined, query: TimelineFunnelQuery): FunnelGroup[] {
  const steps = query.eventTypes.length;
  const windowMs = windowMsOf(query);
  const { startMs, endMs } = query.range;
  const scanEndMs = endMs + windowMs;
  const masksOfType = Int32Array.from(project?.typeNames ?? [], (name) => query.eventTypes.reduce((mask, eventType, k) => (matchesEventType(eventType, name) ? mask | (1 << k) : mask), 0));
  const firstsOfType = masksOfType.map((mask) => (mask === 0 ? steps : 31 - Math.clz32(mask & -mask)));
  // Entries are in the range: their days are its day buckets.
  const days = bucketPieces(query.timeZone, query.range, 'day');
  const dayOf = (time: number) => bucketAt(days, time);
  const group = emptyGroupTimes(steps, query.range.days);
  const user = new UserSteps(steps, query.mode === 'sequential', windowMs);
  const [reached, best, dayBest] = [new Float64Array(steps), new Float64Array(steps), new Float64Array(steps)];
  let entrants = 0;
  for (const timeline of project?.users.values() ?? []) {
    if (user.collect(timeline, startMs, scanEndMs, endMs, masksOfType, firstsOfType) === 0) continue;
    entrants++;
    user.sortSameTimes();
    const { times, masks, length } = user;
    if (query.mode === 'unordered') {
      const events = { times: Array.from(times.subarray(0, length)), masks: Array.from(masks.subarray(0, length)), entries: [] as number[] };
      for (let i = 0; i < length; i++) if ((masks[i]! & 1) !== 0 && times[i]! < endMs) events.entries.push(i);
      addUnorderedUser(group, events, bestPath(events, events.entries, steps, windowMs)!, (event) => dayOf(events.times[event]!), steps, windowMs);
      continue;
    }
    // The winner (furthest, then earliest) over the range and on each entry day (the entries'
    // days follow their order).
    let bestDepth = 0;
    let dayBestDepth = 0;
    let day = -1;
    for (let i = 0; i < length; i++) {
      if ((masks[i]! & 1) === 0 || times[i]! >= endMs) continue;
      const entryDay = dayOf(times[i]!);
      // A complete path on the day is both winners so far, and ties go to the earliest entry.
      if (entryDay === day && dayBestDepth === steps) continue;
      const depth = user.follow(i, reached);
      if (depth > bestDepth) {
        bestDepth = depth;
        for (let k = 0; k < depth; k++) best[k] = reached[k]!;
      }
      if (entryDay !== day) {
        if (day >= 0) add(group.byDay[day]!, dayBest, dayBestDepth, steps);
        day = entryDay;
        dayBestDepth = 0;
      }
      if (depth > dayBestDepth) {
        dayBestDepth = depth;
        for (let k = 0; k < depth; k++) dayBest[k] = reached[k]!;
      }
    }
    add(group.byDay[day]!, dayBest, dayBestDepth, steps);
    add(group.total, best, bestDepth, steps);
  }
  return entrants === 0 ? [] : [summarizedGroup(NONE, group)];
}
