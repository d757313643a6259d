// Per project and user, the user's events as a timeline in memory (typed arrays sorted by
// time, then ingestion order): behavioural queries (funnels) walk each user's events in one
// linear pass instead of sorting and joining millions of rows in SQL. The engine keeps them
// in step with its events table (store/duckdb.ts): appends at each load, merges of users,
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
}

const INITIAL_CAPACITY = 4;

function emptyTimeline(capacity = INITIAL_CAPACITY): Timeline {
  return { times: new Float64Array(capacity), types: new Int32Array(capacity), seqs: new Float64Array(capacity), length: 0 };
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

/** The index of the first event at or after `time`, of `timeline`'s events. */
export function firstAtOrAfter(timeline: Timeline, time: number): number {
  let [low, high] = [0, timeline.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (timeline.times[middle]! < time) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** One project's timelines and event-type dictionary. */
export class ProjectTimelines {
  readonly users = new Map<number, Timeline>();
  /** Event type names by id (an event may have none). */
  readonly typeNames: (string | null)[] = [];
  private readonly typeIds = new Map<string | null, number>();

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
    const timeline = withCapacity(current, current.length + 1);
    this.users.set(svcId, timeline);
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
    const target = this.users.get(to);
    if (!target) {
      this.users.set(to, source);
      return true;
    }
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
    return true;
  }
}

/** Events per slab of a build. */
const SLAB_EVENTS = 1 << 20;

/**
 * Builds a project's timelines from its events ordered by user, then (time, ingestion order):
 * the users' arrays are views of large slabs, one after the other in the order funnels read
 * them (a pass over 10M events in 200k arrays of their own took 1.6 times as long). A
 * user's first append after the build moves its events to arrays of their own.
 */
export class TimelineBuilder {
  readonly project = new ProjectTimelines();
  private svcId = -1;
  private times = new Float64Array(SLAB_EVENTS);
  private types = new Int32Array(SLAB_EVENTS);
  private seqs = new Float64Array(SLAB_EVENTS);
  /** Where the current user's events start in the slab, and where the next goes. */
  private userStart = 0;
  private end = 0;

  add(svcId: number, time: number, type: number, seq: number): void {
    if (svcId !== this.svcId) this.endUser(svcId);
    if (this.end === this.times.length) this.newSlab();
    this.times[this.end] = time;
    this.types[this.end] = type;
    this.seqs[this.end++] = seq;
  }

  /** A new slab for the current user's events and the next users'. */
  private newSlab(): void {
    const held = this.end - this.userStart;
    const size = Math.max(SLAB_EVENTS, 2 * held);
    const [times, types, seqs] = [new Float64Array(size), new Int32Array(size), new Float64Array(size)];
    times.set(this.times.subarray(this.userStart, this.end));
    types.set(this.types.subarray(this.userStart, this.end));
    seqs.set(this.seqs.subarray(this.userStart, this.end));
    [this.times, this.types, this.seqs, this.userStart, this.end] = [times, types, seqs, 0, held];
  }

  private endUser(next: number): void {
    if (this.end > this.userStart) {
      const [from, to] = [this.userStart, this.end];
      this.project.users.set(this.svcId, { times: this.times.subarray(from, to), types: this.types.subarray(from, to), seqs: this.seqs.subarray(from, to), length: to - from });
    }
    this.userStart = this.end;
    this.svcId = next;
  }

  finish(): ProjectTimelines {
    this.endUser(-1);
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

  install(appId: number, project: ProjectTimelines): void {
    this.projects.set(appId, project);
  }
}
