// One user's events of a funnel's steps as the timeline funnel (funnel.ts) reads them: collected
// from a timeline's range or merged from runs by type, put in the funnel's order, and each
// entry followed as far as it gets.
import { firstAtOrAfter, MOST_INDEXED_TYPES } from './timelines.js';

/** One user's events: `times[from..to)` in time order, their types' ids in `types`. */
export interface UserEventRange {
  times: Float64Array;
  types: Int32Array;
  from: number;
  to: number;
}

/** Past every position of a timeline. */
const NO_POSITION = 0x7fffffff;

/**
 * One user's events of the scanned range in the funnel's order at a time (times, step masks:
 * bit k for step k, first steps), in arrays reused from user to user, and how far each entry gets.
 */
export class UserSteps {
  times = new Float64Array(1024);
  masks = new Int32Array(1024);
  firsts = new Int32Array(1024);
  length = 0;
  /** The runs of the steps' types (`addRun`) to merge by position: their events, where the merge is in each and where each ends. */
  private runCount = 0;
  private readonly runTimes: Float64Array[] = [];
  private readonly runPositions: Int32Array[] = [];
  private readonly cursors = new Int32Array(MOST_INDEXED_TYPES);
  private readonly ends = new Int32Array(MOST_INDEXED_TYPES);
  private readonly runMasks = new Int32Array(MOST_INDEXED_TYPES);
  private readonly runFirsts = new Int32Array(MOST_INDEXED_TYPES);
  private readonly heads = new Int32Array(MOST_INDEXED_TYPES);
  /** Ordered funnels: per later step, where the search for its next event resumes (entries come in order, so do their paths). */
  private readonly resume: Int32Array;
  /**
   * The entries (step 1's events before the range's end) in order: their times
   * `entryTimes[entriesFrom..entriesTo)` (a single run's, or those collected in `entryBuffer`),
   * and where each is in `times` (of the events collected).
   */
  entryTimes: Float64Array = new Float64Array(0);
  entriesFrom = 0;
  entriesTo = 0;
  private entryBuffer = new Float64Array(256);
  private entryAt = new Int32Array(256);
  /** Ordered funnels over the runs added, not merged (`entriesOfRuns`): each step's next event is searched in its types' runs. */
  private inRuns = false;
  /** Per step and run, where the search for the step's next event resumes in the run. */
  private readonly runResume: Int32Array;
  /**
   * The path of the last entry followed in the runs: its steps' events however late (`pathLength`
   * of them, 0: none followed yet), and the first step of its step 2's event. An entry before
   * that event follows the same path (`sharesPath`).
   */
  private readonly pathTimes: Float64Array;
  private pathLength = 0;
  private pathSecondFirst = 0;

  constructor(
    private readonly steps: number,
    private readonly sequential: boolean,
    private readonly windowMs: number,
  ) {
    this.resume = new Int32Array(steps);
    this.runResume = new Int32Array(steps * MOST_INDEXED_TYPES);
    this.pathTimes = new Float64Array(steps);
  }

  /** Before a user's events are collected. */
  begin(): void {
    this.length = 0;
    this.runCount = 0;
    this.entriesTo = 0;
    this.inRuns = false;
    this.pathLength = 0;
  }

  /**
   * A user's events `times[from..to)` (by time, their types' ids in `types`) in [fromMs, toMs)
   * of a step (every one, sequential funnels); the number of entries (step 1 before `entriesEndMs`).
   */
  collectRange(events: UserEventRange, fromMs: number, toMs: number, entriesEndMs: number, masksOfType: Int32Array, firstsOfType: Int32Array): number {
    const { times, types } = events;
    const keepAll = this.sequential;
    // The events of [fromMs, toMs) by binary search: the loop reads only the types of the events it skips.
    const end = firstAtOrAfter(times, events.from, events.to, toMs);
    const start = firstAtOrAfter(times, events.from, events.to, fromMs);
    this.reserve(end - start);
    let length = 0;
    let entries = 0;
    for (let i = start; i < end; i++) {
      const type = types[i]!;
      const mask = masksOfType[type]!;
      // A sequential funnel keeps every event: none may come between two steps.
      if (mask !== 0 || keepAll) entries += this.put(length++, times[i]!, mask, firstsOfType[type]!, entriesEndMs);
    }
    this.length = length;
    return entries;
  }

  /** One of the user's runs of a step's type: `times[from..to)` (in time order), at `positions[from..to)` of its timeline. */
  addRun(times: Float64Array, positions: Int32Array, from: number, to: number, mask: number, first: number): void {
    const run = this.runCount++;
    this.runTimes[run] = times;
    this.runPositions[run] = positions;
    this.cursors[run] = from;
    this.ends[run] = to;
    this.runMasks[run] = mask;
    this.runFirsts[run] = first;
  }

  /**
   * The events in [fromMs, toMs) of the runs added, merged by position (the timeline's order); the
   * number of entries (step 1 before `entriesEndMs`): none read but step 1's when there is none.
   */
  collectRuns(fromMs: number, toMs: number, entriesEndMs: number): number {
    const { runTimes, runPositions, cursors, ends, runCount } = this;
    let entered = false;
    for (let r = 0; r < runCount && !entered; r++) {
      if ((this.runMasks[r]! & 1) === 0) continue;
      const cursor = firstAtOrAfter(runTimes[r]!, cursors[r]!, ends[r]!, fromMs);
      entered = cursor < ends[r]! && runTimes[r]![cursor]! < entriesEndMs;
    }
    if (!entered) return 0;
    let events = 0;
    for (let r = 0; r < runCount; r++) {
      cursors[r] = firstAtOrAfter(runTimes[r]!, cursors[r]!, ends[r]!, fromMs);
      events += ends[r]! - cursors[r]!;
    }
    this.reserve(events);
    const { runMasks, runFirsts, heads } = this;
    // Each run's next position (none: past every position).
    for (let r = 0; r < runCount; r++) heads[r] = cursors[r]! < ends[r]! ? runPositions[r]![cursors[r]!]! : NO_POSITION;
    let length = 0;
    let entries = 0;
    for (let next = this.firstHead(); next >= 0; next = this.firstHead()) {
      const time = runTimes[next]![cursors[next]!]!;
      if (time >= toMs) break;
      this.advance(next);
      entries += this.put(length++, time, runMasks[next]!, runFirsts[next]!, entriesEndMs);
    }
    this.length = length;
    return entries;
  }

  /**
   * Ordered funnels: the entries of the runs added (step 1's events in [fromMs, entriesEndMs), by
   * time, then position), their paths to be searched in the runs themselves: no event but the
   * entries and those the paths pass is read.
   */
  entriesOfRuns(fromMs: number, entriesEndMs: number): void {
    const { runTimes, runPositions, cursors, ends, runCount, heads } = this;
    this.inRuns = true;
    let events = 0;
    for (let r = 0; r < runCount; r++) {
      cursors[r] = firstAtOrAfter(runTimes[r]!, cursors[r]!, ends[r]!, fromMs);
      for (let k = 1; k < this.steps; k++) this.runResume[k * MOST_INDEXED_TYPES + r] = cursors[r]!;
      if ((this.runMasks[r]! & 1) !== 0) events += ends[r]! - cursors[r]!;
    }
    const entryRun = this.onlyEntryRun();
    if (entryRun >= 0) {
      // Step 1 of a single run: its events are the entries, in its order.
      const times = runTimes[entryRun]!;
      this.entryTimes = times;
      this.entriesFrom = cursors[entryRun]!;
      this.entriesTo = firstAtOrAfter(times, this.entriesFrom, ends[entryRun]!, entriesEndMs);
      return;
    }
    this.reserveEntries(events);
    let count = 0;
    for (let r = 0; r < runCount; r++) heads[r] = (this.runMasks[r]! & 1) !== 0 && cursors[r]! < ends[r]! ? runPositions[r]![cursors[r]!]! : NO_POSITION;
    for (let next = this.firstHead(); next >= 0; next = this.firstHead()) {
      const time = runTimes[next]![cursors[next]!]!;
      if (time >= entriesEndMs) heads[next] = NO_POSITION;
      else {
        this.entryBuffer[count++] = time;
        this.advance(next);
      }
    }
    this.useEntryBuffer(count);
  }

  /** The one run of the runs added with events of step 1; -1 when there are several (or none). */
  private onlyEntryRun(): number {
    let found = -1;
    for (let r = 0; r < this.runCount; r++) {
      if ((this.runMasks[r]! & 1) === 0) continue;
      if (found >= 0) return -1;
      found = r;
    }
    return found;
  }

  /** The run whose next event comes first (runs hold distinct positions); -1 when every run is done, or there is none. */
  private firstHead(): number {
    const { heads, runCount } = this;
    let next = -1;
    let position = NO_POSITION;
    for (let r = 0; r < runCount; r++) {
      if (heads[r]! >= position) continue;
      next = r;
      position = heads[r]!;
    }
    return next;
  }

  /** Past the next event of run `r`. */
  private advance(r: number): void {
    const at = ++this.cursors[r]!;
    this.heads[r] = at < this.ends[r]! ? this.runPositions[r]![at]! : NO_POSITION;
  }

  /** The entries of the events collected, sorted (`sortSameTimes`): step 1's before `entriesEndMs`. */
  entriesOfCollected(entriesEndMs: number): void {
    this.resume.fill(0);
    this.reserveEntries(this.length);
    let count = 0;
    for (let i = 0; i < this.length; i++) {
      if ((this.masks[i]! & 1) === 0 || this.times[i]! >= entriesEndMs) continue;
      this.entryBuffer[count] = this.times[i]!;
      this.entryAt[count++] = i;
    }
    this.useEntryBuffer(count);
  }

  private reserveEntries(count: number): void {
    if (count <= this.entryBuffer.length) return;
    let size = this.entryBuffer.length;
    while (size < count) size *= 2;
    [this.entryBuffer, this.entryAt] = [new Float64Array(size), new Int32Array(size)];
  }

  private useEntryBuffer(count: number): void {
    this.entryTimes = this.entryBuffer;
    this.entriesFrom = 0;
    this.entriesTo = count;
  }

  /** How far the entry at `entryTimes[entry]` gets (`follow`, or in the runs), the time each step was reached in `reached`; entries in order. */
  followEntry(entry: number, reached: Float64Array): number {
    return this.inRuns ? this.followInRuns(this.entryTimes[entry]!, reached) : this.follow(this.entryAt[entry]!, reached);
  }

  /**
   * `follow` over the runs: each step's next event is the earliest, in the funnel's order (time,
   * first step, position), of its types' runs that comes after the step before (a later time, or
   * the same time and a later first step: events of the same time and first step are one moment).
   */
  private followInRuns(t0: number, reached: Float64Array): number {
    if (!this.sharesPath(t0)) this.findPath(t0);
    const { pathTimes, pathLength } = this;
    const last = t0 + this.windowMs;
    reached[0] = t0;
    let depth = 1;
    while (depth < pathLength && pathTimes[depth]! <= last) {
      reached[depth] = pathTimes[depth]!;
      depth++;
    }
    return depth;
  }

  /**
   * Whether an entry at `t0` follows the last path found: entries come in order, so the events
   * that may follow this one are among those that could follow the path's (all of them at the
   * same time); when the path's step 2 is one of them, it is the first, and the rest follow.
   * Without a step 2 there, there is none here either.
   */
  private sharesPath(t0: number): boolean {
    if (this.pathLength === 0) return false;
    if (this.pathLength === 1) return true;
    const second = this.pathTimes[1]!;
    return second > t0 || (second === t0 && this.pathSecondFirst > 0);
  }

  /**
   * How early an entry after the last one followed may reach further than `depth` steps: none
   * before the time returned does (-Infinity: any may). Entries that share the last path reach
   * step `depth` once the window covers its event.
   */
  earliestBeyond(depth: number): number {
    if (!this.inRuns || this.pathLength === 0) return -Infinity;
    const pathEnd = this.pathLength > 1 ? this.pathTimes[1]! : Infinity;
    return Math.min(pathEnd, depth < this.pathLength ? this.pathTimes[depth]! - this.windowMs : Infinity);
  }

  /**
   * The path of the entry at `t0`, its steps' events however late they come (`pathTimes`,
   * `pathLength`). Of a step's events of the same time and first step, any is the path's: they
   * are one moment, the same path from there.
   */
  private findPath(t0: number): void {
    const { runTimes, runMasks, runFirsts, ends, runResume, runCount, pathTimes } = this;
    pathTimes[0] = t0;
    this.pathLength = 1;
    let time = t0;
    let first = 0;
    for (let k = 1; k < this.steps; k++) {
      const bit = 1 << k;
      let nextTime = Infinity;
      let nextFirst = 0;
      for (let r = 0; r < runCount; r++) {
        if ((runMasks[r]! & bit) === 0) continue;
        const times = runTimes[r]!;
        const runFirst = runFirsts[r]!;
        const end = ends[r]!;
        const slot = k * MOST_INDEXED_TYPES + r;
        let at = runResume[slot]!;
        while (at < end && (times[at]! < time || (times[at] === time && runFirst <= first))) at++;
        runResume[slot] = at;
        if (at < end && (times[at]! < nextTime || (times[at] === nextTime && runFirst < nextFirst))) {
          nextTime = times[at]!;
          nextFirst = runFirst;
        }
      }
      if (nextTime === Infinity) return;
      pathTimes[k] = nextTime;
      this.pathLength = k + 1;
      if (k === 1) this.pathSecondFirst = nextFirst;
      time = nextTime;
      first = nextFirst;
    }
  }

  /** The event collected at `at`: 1 when it is an entry (step 1 before `entriesEndMs`). */
  private put(at: number, time: number, mask: number, first: number, entriesEndMs: number): number {
    this.times[at] = time;
    this.masks[at] = mask;
    this.firsts[at] = first;
    return (mask & 1) !== 0 && time < entriesEndMs ? 1 : 0;
  }

  /** Room for `count` events. */
  private reserve(count: number): void {
    if (count <= this.times.length) return;
    let size = this.times.length;
    while (size < count) size *= 2;
    [this.times, this.masks, this.firsts] = [new Float64Array(size), new Int32Array(size), new Int32Array(size)];
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
  private follow(entry: number, reached: Float64Array): number {
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
