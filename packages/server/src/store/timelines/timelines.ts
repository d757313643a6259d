// Per project and user, the user's events as a timeline in memory (typed arrays sorted by
// time, then ingestion order): behavioural queries (funnels) walk each user's events in one
// linear pass instead of sorting and joining millions of rows in SQL. The engine keeps them
// in step with its events table (store/duckdb/engine.ts): appends at each load, merges of users,
// and a project forgotten (then rebuilt from the table) on any other change of its events.

/** One user's events, sorted by (time, ingestion order); the arrays' first `length` items are used. */
export interface Timeline {
  /** Event time, ms. */
  times: Float64Array;
  /** Event type, as its id in the project's dictionary. */
  types: Int32Array;
  /** `ingest_seq`. */
  seqs: Float64Array;
  length: number;
  /** The user's events by type (`typeRuns`), for a timeline out of its project's columns: made when a query needs it. */
  runs: TypeRuns | undefined;
  /** The user's number in its project's columns (`TypeColumns`); -1 when the columns do not hold this timeline. */
  ordinal: number;
}

const INITIAL_CAPACITY = 4;

function emptyTimeline(capacity = INITIAL_CAPACITY): Timeline {
  return { times: new Float64Array(capacity), types: new Int32Array(capacity), seqs: new Float64Array(capacity), length: 0, runs: undefined, ordinal: -1 };
}

/** The timeline with room for `capacity` events (doubling), its events kept. */
function withCapacity(timeline: Timeline, capacity: number): Timeline {
  if (capacity <= timeline.times.length) return timeline;
  let size = Math.max(timeline.times.length, INITIAL_CAPACITY);
  while (size < capacity) size *= 2;
  const grown = emptyTimeline(size);
  grown.times.set(timeline.times.subarray(0, timeline.length));
  grown.types.set(timeline.types.subarray(0, timeline.length));
  grown.seqs.set(timeline.seqs.subarray(0, timeline.length));
  grown.length = timeline.length;
  return grown;
}

/** The first index of `times[from..to)` (sorted) whose time is at or after `time`. */
export function firstAtOrAfter(times: Float64Array, from: number, to: number, time: number): number {
  // Most searches start a range: at a user's first event, one read instead of a search's misses.
  if (from >= to || times[from]! >= time) return from;
  let [low, high] = [from, to];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (times[middle]! < time) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Queries of the events of at most this many types read these types' events only (`TypeColumns`,
 * `typeRuns`); of more (`_all`, `_active`), every event of the range.
 */
export const MOST_INDEXED_TYPES = 8;

/**
 * One user's events grouped by type, each type's run in time order: run r is the events
 * [ends[r - 1], ends[r]) of `times` and `positions` (their indexes in the timeline: position
 * order is the timeline's (time, ingestion) order, so a query merges the runs it needs by position).
 */
export interface TypeRuns {
  types: Int32Array;
  ends: Int32Array;
  times: Float64Array;
  positions: Int32Array;
}

/** The timeline's runs by type, made at the first need after a change of the user's events. */
export function typeRuns(timeline: Timeline): TypeRuns {
  if (timeline.runs === undefined) {
    const { types, length } = timeline;
    const counts = typeSorter.count(types, length);
    const runs = { types: Int32Array.from(typeSorter.typesSeen), ends: new Int32Array(typeSorter.typesSeen.length), times: new Float64Array(length), positions: new Int32Array(length) };
    let end = 0;
    typeSorter.typesSeen.forEach((type, r) => {
      const start = end;
      end += counts[type]!;
      runs.ends[r] = end;
      counts[type] = start;
    });
    for (let i = 0; i < length; i++) {
      const at = counts[types[i]!]!++;
      runs.times[at] = timeline.times[i]!;
      runs.positions[at] = i;
    }
    typeSorter.clear();
    timeline.runs = runs;
  }
  return timeline.runs;
}

/** Events per type id of a user's events, with the types seen (scratch arrays kept from user to user). */
class TypeSorter {
  counts = new Int32Array(64);
  /** In the order of their first event. */
  readonly typesSeen: number[] = [];

  /** Counts the types of `types[0..length)`; `clear` before the next user. */
  count(types: Int32Array, length: number): Int32Array {
    for (let i = 0; i < length; i++) {
      const type = types[i]!;
      if (type >= this.counts.length) {
        const counts = new Int32Array(Math.max(2 * this.counts.length, type + 1));
        counts.set(this.counts);
        this.counts = counts;
      }
      if (this.counts[type]!++ === 0) this.typesSeen.push(type);
    }
    return this.counts;
  }

  clear(): void {
    for (const type of this.typesSeen) this.counts[type] = 0;
    this.typesSeen.length = 0;
  }
}

const typeSorter = new TypeSorter();

/** One type's events of the users a build made, user after user. */
export interface TypeColumn {
  /** The users with events of the type, by ordinal (ascending). */
  users: Int32Array;
  /** Where each user's events start in `times` and `positions` (one more: the end). */
  starts: Int32Array;
  /** Each user's events in time order. */
  times: Float64Array;
  /** The events' indexes in their user's timeline. */
  positions: Int32Array;
}

// Columns are shared memory: a funnel's helper thread reads half of their users (never written after the build).
const sharedInt32s = (length: number) => new Int32Array(new SharedArrayBuffer(length * Int32Array.BYTES_PER_ELEMENT));
const sharedFloat64s = (length: number) => new Float64Array(new SharedArrayBuffer(length * Float64Array.BYTES_PER_ELEMENT));

/**
 * A project's events per type as its build made them, each type's in arrays of their own: a query
 * of a few types reads their events one after the other, and none of the users without them (a
 * pass over the users' own runs took as long as a pass over all their events). A user's timeline
 * that changes afterwards is marked stale here: its events are read from the timeline.
 */
export class TypeColumns {
  /** Per type id; undefined: no events of the type. */
  readonly byType: (TypeColumn | undefined)[] = [];
  /** Per ordinal, 1: the user's events changed since the build. */
  readonly stale: Uint8Array;

  constructor(users: Timeline[], typeCount: number) {
    this.stale = new Uint8Array(users.length);
    const [userCounts, eventCounts] = [new Int32Array(typeCount), new Int32Array(typeCount)];
    for (const { types, length } of users) {
      const counts = typeSorter.count(types, length);
      for (const type of typeSorter.typesSeen) {
        userCounts[type]!++;
        eventCounts[type]! += counts[type]!;
      }
      typeSorter.clear();
    }
    for (let type = 0; type < typeCount; type++) {
      if (userCounts[type] === 0) continue;
      const column = { users: sharedInt32s(userCounts[type]!), starts: sharedInt32s(userCounts[type]! + 1), times: sharedFloat64s(eventCounts[type]!), positions: sharedInt32s(eventCounts[type]!) };
      column.starts[userCounts[type]!] = eventCounts[type]!;
      this.byType[type] = column;
    }
    // Where each type's next user and event go.
    const [userAt, eventAt] = [new Int32Array(typeCount), new Int32Array(typeCount)];
    users.forEach((timeline, ordinal) => {
      timeline.ordinal = ordinal;
      const { times, types, length } = timeline;
      for (let i = 0; i < length; i++) {
        const type = types[i]!;
        const column = this.byType[type]!;
        if (i === 0 || column.users[userAt[type]! - 1] !== ordinal) {
          column.users[userAt[type]!] = ordinal;
          column.starts[userAt[type]!++] = eventAt[type]!;
        }
        column.times[eventAt[type]!] = times[i]!;
        column.positions[eventAt[type]!++] = i;
      }
    });
  }
}

/** One project's timelines and event-type dictionary. */
export class ProjectTimelines {
  readonly users = new Map<number, Timeline>();
  /** Event type names by id (an event may have none). */
  readonly typeNames: (string | null)[] = [];
  private readonly typeIds = new Map<string | null, number>();
  /** Its build's events per type; undefined for a project its loads made (no build). */
  columns: TypeColumns | undefined;
  /** With columns, the users whose timelines the columns do not hold (new or changed since the build). */
  private readonly loose = new Set<number>();

  /** The timelines the columns do not hold: every one without columns. */
  *looseTimelines(): Iterable<Timeline> {
    if (!this.columns) yield* this.users.values();
    else for (const svcId of this.loose) yield this.users.get(svcId)!;
  }

  /** The timeline is about to change: out of the columns, its runs by type to be made again. */
  private changing(timeline: Timeline): void {
    if (timeline.ordinal >= 0) {
      this.columns!.stale[timeline.ordinal] = 1;
      timeline.ordinal = -1;
    }
    timeline.runs = undefined;
  }

  typeId(name: string | null): number {
    let id = this.typeIds.get(name);
    if (id === undefined) {
      id = this.typeNames.length;
      this.typeNames.push(name);
      this.typeIds.set(name, id);
    }
    return id;
  }

  /** Adds one event at its place: usually the end (events mostly arrive in time order). */
  append(svcId: number, time: number, type: number, seq: number): void {
    const current = this.users.get(svcId) ?? emptyTimeline();
    this.changing(current);
    const timeline = withCapacity(current, current.length + 1);
    this.users.set(svcId, timeline);
    if (this.columns) this.loose.add(svcId);
    const { times, types, seqs } = timeline;
    const after = (i: number) => times[i]! > time || (times[i] === time && seqs[i]! > seq);
    let at = timeline.length;
    if (at > 0 && after(at - 1)) {
      // A late event: before the first event of a later (time, ingest_seq), the others shifted.
      let low = 0;
      while (low < at) {
        const middle = (low + at) >>> 1;
        if (after(middle)) at = middle;
        else low = middle + 1;
      }
      // A loop: copyWithin's three calls cost more for the few events a late one usually moves.
      for (let i = timeline.length; i > at; i--) {
        times[i] = times[i - 1]!;
        types[i] = types[i - 1]!;
        seqs[i] = seqs[i - 1]!;
      }
    }
    times[at] = time;
    types[at] = type;
    seqs[at] = seq;
    timeline.length++;
  }

  /** Moves every event of `from` to `to` (a sorted merge of both timelines); false when `from` has none here. */
  merge(from: number, to: number): boolean {
    const source = this.users.get(from);
    if (!source) return false;
    this.users.delete(from);
    const wasLoose = this.loose.delete(from);
    const target = this.users.get(to);
    if (!target) {
      // The same events: where the columns hold them, they still do.
      this.users.set(to, source);
      if (wasLoose) this.loose.add(to);
      return true;
    }
    this.changing(source);
    this.changing(target);
    const merged = emptyTimeline(source.length + target.length);
    let [i, j] = [0, 0];
    for (let k = 0; k < merged.times.length; k++) {
      const fromSource = j >= target.length || (i < source.length && (source.times[i]! < target.times[j]! || (source.times[i] === target.times[j] && source.seqs[i]! < target.seqs[j]!)));
      const [timeline, at] = fromSource ? [source, i++] : [target, j++];
      merged.times[k] = timeline.times[at]!;
      merged.types[k] = timeline.types[at]!;
      merged.seqs[k] = timeline.seqs[at]!;
    }
    merged.length = merged.times.length;
    this.users.set(to, merged);
    if (this.columns) this.loose.add(to);
    return true;
  }
}

/** Events per slab of a build. */
const SLAB_EVENTS = 1 << 20;
/** A timeline's bytes per event: time, type and `ingest_seq`. */
const BYTES_PER_EVENT = Float64Array.BYTES_PER_ELEMENT + Int32Array.BYTES_PER_ELEMENT + Float64Array.BYTES_PER_ELEMENT;

/**
 * Builds a project's timelines from its events ordered by user, then (time, ingestion order):
 * the users' arrays are views of large slabs, one after the other in the order funnels read
 * them (arrays of their own scatter them in memory, and a pass is slower), then the
 * project's events per type (`TypeColumns`). A user's first append after the build moves its
 * events to arrays of their own.
 */
export class TimelineBuilder {
  readonly project = new ProjectTimelines();
  /** Its slabs came to more than the budget: it stopped adding events (what it built is not to be used). */
  exceeded = false;
  private slabBytes = SLAB_EVENTS * BYTES_PER_EVENT;
  private svcId = -1;
  private times = new Float64Array(SLAB_EVENTS);
  private types = new Int32Array(SLAB_EVENTS);
  private seqs = new Float64Array(SLAB_EVENTS);
  /** Where the current user's events start in the slab, and where the next goes. */
  private userStart = 0;
  private end = 0;

  /** `budgetBytes`: the most its slabs may take. */
  constructor(private readonly budgetBytes = Infinity) {}

  add(svcId: number, time: number, type: number, seq: number): void {
    if (this.exceeded) return;
    if (svcId !== this.svcId) this.endUser(svcId);
    if (this.end === this.times.length && !this.newSlab()) return;
    this.times[this.end] = time;
    this.types[this.end] = type;
    this.seqs[this.end++] = seq;
  }

  /** A new slab for the current user's events and the next users'; false past the budget. */
  private newSlab(): boolean {
    const held = this.end - this.userStart;
    const size = Math.max(SLAB_EVENTS, 2 * held);
    this.slabBytes += size * BYTES_PER_EVENT;
    if (this.slabBytes > this.budgetBytes) return !(this.exceeded = true);
    const [times, types, seqs] = [new Float64Array(size), new Int32Array(size), new Float64Array(size)];
    times.set(this.times.subarray(this.userStart, this.end));
    types.set(this.types.subarray(this.userStart, this.end));
    seqs.set(this.seqs.subarray(this.userStart, this.end));
    [this.times, this.types, this.seqs, this.userStart, this.end] = [times, types, seqs, 0, held];
    return true;
  }

  /** The last slab cut to the events it holds (a small project's build would hold a whole slab): its users' views moved to the cut arrays. */
  private trimLastSlab(): void {
    if (this.end === this.times.length) return;
    const [times, types, seqs] = [this.times.slice(0, this.end), this.types.slice(0, this.end), this.seqs.slice(0, this.end)];
    for (const timeline of this.project.users.values()) {
      if (timeline.times.buffer !== this.times.buffer) continue;
      const [from, to] = [timeline.times.byteOffset / Float64Array.BYTES_PER_ELEMENT, timeline.times.byteOffset / Float64Array.BYTES_PER_ELEMENT + timeline.length];
      [timeline.times, timeline.types, timeline.seqs] = [times.subarray(from, to), types.subarray(from, to), seqs.subarray(from, to)];
    }
    [this.times, this.types, this.seqs] = [times, types, seqs];
  }

  private endUser(next: number): void {
    if (this.end > this.userStart) {
      const [from, to] = [this.userStart, this.end];
      this.project.users.set(this.svcId, { times: this.times.subarray(from, to), types: this.types.subarray(from, to), seqs: this.seqs.subarray(from, to), length: to - from, runs: undefined, ordinal: -1 });
    }
    this.userStart = this.end;
    this.svcId = next;
  }

  finish(): ProjectTimelines {
    this.endUser(-1);
    this.trimLastSlab();
    this.project.columns = new TypeColumns([...this.project.users.values()], this.project.typeNames.length);
    return this.project;
  }
}

/** Every project's timelines. */
export class UserTimelines {
  private readonly projects = new Map<number, ProjectTimelines>();

  project(appId: number): ProjectTimelines | undefined {
    return this.projects.get(appId);
  }

  append(appId: number, svcId: number, time: number, eventType: string | null, seq: number): void {
    let project = this.projects.get(appId);
    if (!project) this.projects.set(appId, (project = new ProjectTimelines()));
    project.append(svcId, time, project.typeId(eventType), seq);
  }

  /** `svc_id`s are unique across projects: the one holding `from` merges it. */
  merge(from: number, to: number): void {
    for (const project of this.projects.values()) if (project.merge(from, to)) return;
  }

  forget(appId: number): void {
    this.projects.delete(appId);
  }

  /** The projects held, with their timelines. */
  entries(): IterableIterator<[number, ProjectTimelines]> {
    return this.projects.entries();
  }

  install(appId: number, project: ProjectTimelines): void {
    this.projects.set(appId, project);
  }
}
