// Plain funnels over the engine's per-user timelines (store/timelines/timelines.ts), in the engine's
// thread (half of a large funnel's users in a helper thread, funnel-helper.ts): the same
// answers as the SQL of runners/funnels.ts (SEMANTICS.md, `/api/2/funnels`) in one pass over
// each user's events in the scanned range, [start, end + window): but for sequential funnels
// and steps of many types, over the steps' events only (the project's columns, changed users'
// runs by type). Events count in the SQL's order: by time, then the
// first step they match, then ingestion.
import { bestPath } from '../../model/funnel-paths.js';
import { matchesEventType, NONE } from '../../model/query.js';
import { bucketAt, type BucketPieces, bucketPieces, pieceAt, type ReportRange } from '../../model/time.js';
import { add, addUnorderedUser, emptyGroupTimes, type FunnelGroup, type FunnelMode, type GroupTimes, mergeGroupTimes, type PlainGroupTimes, plainGroupTimes, summarizedGroup, windowMsOf } from '../../model/funnel-times.js';
import { MOST_INDEXED_TYPES, type ProjectTimelines, type TypeColumn, typeRuns } from './timelines.js';
import { type UserEventRange, UserSteps } from './user-steps.js';

export interface TimelineFunnelQuery {
  appId: number;
  timeZone: string;
  range: ReportRange;
  /** The steps' event types (a name, `ce:<name>`, `_all` or `_active`). */
  eventTypes: string[];
  mode: FunnelMode;
  windowSeconds: number;
}

/** Past every user ordinal. */
const NO_USER = 0x7fffffff;

/** The funnel's counts, user after user. */
class FunnelTally {
  entrants = 0;
  readonly group: GroupTimes;
  readonly windowMs: number;
  private readonly reached: Float64Array;
  private readonly best: Float64Array;
  private readonly dayBest: Float64Array;

  constructor(
    readonly query: TimelineFunnelQuery,
    /** The range's day buckets: entries are in the range. */
    readonly days: BucketPieces,
  ) {
    const steps = query.eventTypes.length;
    this.group = emptyGroupTimes(steps, query.range.days);
    this.windowMs = windowMsOf(query);
    [this.reached, this.best, this.dayBest] = [new Float64Array(steps), new Float64Array(steps), new Float64Array(steps)];
  }

  /** Another share's users. */
  include(share: ShareTally): void {
    this.entrants += share.entrants;
    mergeGroupTimes(this.group, share.group);
  }

  result(): FunnelGroup[] {
    return this.entrants === 0 ? [] : [summarizedGroup(NONE, this.group)];
  }

  /** A user with entries, its events collected. */
  addUser(user: UserSteps): void {
    const { query, group, days, windowMs } = this;
    const steps = query.eventTypes.length;
    const endMs = query.range.endMs;
    user.sortSameTimes();
    const { times, masks, length } = user;
    if (query.mode === 'unordered') {
      this.entrants++;
      const events = { times: Array.from(times.subarray(0, length)), masks: Array.from(masks.subarray(0, length)), entries: [] as number[] };
      for (let i = 0; i < length; i++) if ((masks[i]! & 1) !== 0 && times[i]! < endMs) events.entries.push(i);
      addUnorderedUser(group, events, bestPath(events, events.entries, steps, windowMs)!, (event) => bucketAt(days, events.times[event]!), steps, windowMs);
      return;
    }
    user.entriesOfCollected(endMs);
    this.addEntries(user);
  }

  /**
   * A user's entries (`entriesOfCollected`, `entriesOfRuns`), when there are: the winner
   * (furthest, then earliest) over the range and on each entry day (the entries' days follow
   * their order, their pieces too). After each entry followed, the entries that cannot reach
   * further on its day are skipped (a complete path: all of the day's).
   */
  addEntries(user: UserSteps): void {
    const { group, days, reached, best, dayBest } = this;
    const steps = this.query.eventTypes.length;
    const { entryTimes, entriesFrom, entriesTo } = user;
    if (entriesFrom === entriesTo) return;
    this.entrants++;
    let bestDepth = 0;
    let dayBestDepth = 0;
    let day = -1;
    // The first entry's piece by binary search (a walk from the range's first day cost as much as the paths), the next ones' by walking on.
    let piece = pieceAt(days, entryTimes[entriesFrom]!);
    const { starts, buckets } = days;
    for (let e = entriesFrom; e < entriesTo; ) {
      while (entryTimes[e]! >= starts[piece + 1]!) piece++;
      if (buckets[piece] !== day) {
        if (day >= 0) add(group.byDay[day]!, dayBest, dayBestDepth, steps);
        day = buckets[piece]!;
        dayBestDepth = 0;
      }
      const depth = user.followEntry(e, reached);
      // Ties go to the earliest entry.
      if (depth > bestDepth) {
        bestDepth = depth;
        for (let k = 0; k < depth; k++) best[k] = reached[k]!;
      }
      if (depth > dayBestDepth) {
        dayBestDepth = depth;
        for (let k = 0; k < depth; k++) dayBest[k] = reached[k]!;
      }
      const next = dayBestDepth === steps ? starts[piece + 1]! : Math.min(starts[piece + 1]!, user.earliestBeyond(dayBestDepth));
      for (e++; e < entriesTo && entryTimes[e]! < next; e++);
    }
    add(group.byDay[day]!, dayBest, dayBestDepth, steps);
    add(group.total, best, bestDepth, steps);
  }
}

/** A step type's column (the build's users' events of the type) and the steps its events are. */
export interface StepColumn extends TypeColumn {
  mask: number;
  first: number;
}

/**
 * A share of a funnel's users to tally in a helper thread (funnel-helper.ts): the build's users
 * of ordinals [fromOrdinal, toOrdinal) in the steps' columns but those stale when it was asked.
 */
export interface ColumnsShare {
  query: TimelineFunnelQuery;
  days: BucketPieces;
  columns: StepColumn[];
  stale: Uint8Array;
  fromOrdinal: number;
  toOrdinal: number;
}

/** What a share's users add to the funnel's counts. */
export interface ShareTally {
  entrants: number;
  group: PlainGroupTimes;
}

/** Tallies a share of the users in another thread; undefined: not worth one (few users). */
export interface FunnelHelper {
  tally(share: ColumnsShare, users: number): Promise<ShareTally> | undefined;
}

/**
 * The funnel's groups (one, `(none)`, or none without entrants) from the project's timelines,
 * as funnels.ts's `chainedGroups` / `unorderedGroups` give them. With a helper, the second half
 * of the columns' users is tallied in its thread while this one tallies the rest, from the same
 * moment: the columns never change, their stale users are those of the start.
 */
export async function timelineFunnel(project: ProjectTimelines | undefined, query: TimelineFunnelQuery, helper?: FunnelHelper): Promise<FunnelGroup[]> {
  if (!project) return [];
  const { masksOfType, firstsOfType } = stepsOfTypes(project.typeNames, query);
  const user = new UserSteps(query.eventTypes.length, query.mode === 'sequential', windowMsOf(query));
  const tally = new FunnelTally(query, bucketPieces(query.timeZone, query.range, 'day'));
  const stepTypes = masksOfType.reduce((found: number[], mask, type) => (mask === 0 ? found : [...found, type]), []);
  if (query.mode === 'sequential' || stepTypes.length > MOST_INDEXED_TYPES) {
    for (const { times, types, length } of project.users.values()) tallyUser({ times, types, from: 0, to: length }, masksOfType, firstsOfType, user, tally);
    return tally.result();
  }
  // The steps' events only: the build's users from its columns, the others from their runs by type.
  const { columns } = project;
  const share: ColumnsShare = {
    query,
    days: tally.days,
    columns: columns ? stepTypes.flatMap((type) => (columns.byType[type] ? [{ ...columns.byType[type], mask: masksOfType[type]!, first: firstsOfType[type]! }] : [])) : [],
    stale: columns ? columns.stale.slice() : new Uint8Array(0),
    fromOrdinal: 0,
    toOrdinal: NO_USER,
  };
  const [entryUsers] = share.columns.filter((column) => (column.mask & 1) !== 0).map((column) => column.users);
  const half = entryUsers ? entryUsers[entryUsers.length >>> 1]! : NO_USER;
  const helped = entryUsers && helper?.tally({ ...share, fromOrdinal: half }, entryUsers.length);
  tallyColumns({ ...share, toOrdinal: helped ? half : NO_USER }, user, tally);
  for (const timeline of project.looseTimelines()) {
    user.begin();
    const { types, ends, times, positions } = typeRuns(timeline);
    for (let r = 0; r < types.length; r++) {
      if (masksOfType[types[r]!] !== 0) user.addRun(times, positions, r === 0 ? 0 : ends[r - 1]!, ends[r]!, masksOfType[types[r]!]!, firstsOfType[types[r]!]!);
    }
    addRuns(user, tally, query);
  }
  if (helped) {
    // A helper that failed leaves its share here.
    const other = await helped.catch(() => tallyShare({ ...share, fromOrdinal: half }));
    tally.include(other);
  }
  return tally.result();
}

/**
 * Users' events side by side (each user's in time order, of the scanned range: of the steps'
 * types at least, every one for sequential funnels): user u's are [starts[u], starts[u + 1]).
 */
export interface UsersEvents {
  times: Float64Array;
  types: Int32Array;
  starts: Int32Array;
}

/** A funnel over users' events read a share of the users at a time (the ClickHouse engine's, read for the question: clickhouse/user-timelines.ts). */
export async function funnelOfUsers(shares: AsyncIterable<UsersEvents>, typeNames: readonly (string | null)[], query: TimelineFunnelQuery): Promise<FunnelGroup[]> {
  const { masksOfType, firstsOfType } = stepsOfTypes(typeNames, query);
  const user = new UserSteps(query.eventTypes.length, query.mode === 'sequential', windowMsOf(query));
  const tally = new FunnelTally(query, bucketPieces(query.timeZone, query.range, 'day'));
  for await (const { times, types, starts } of shares) {
    const range: UserEventRange = { times, types, from: 0, to: 0 };
    for (let u = 0; u + 1 < starts.length; u++) {
      [range.from, range.to] = [starts[u]!, starts[u + 1]!];
      tallyUser(range, masksOfType, firstsOfType, user, tally);
    }
  }
  return tally.result();
}

/** Per event type (by id), the steps it is (bit k: step k) and the first of them (`steps`: none). */
function stepsOfTypes(typeNames: readonly (string | null)[], query: TimelineFunnelQuery): { masksOfType: Int32Array; firstsOfType: Int32Array } {
  const steps = query.eventTypes.length;
  const masksOfType = Int32Array.from(typeNames, (name) => query.eventTypes.reduce((mask, eventType, k) => (matchesEventType(eventType, name) ? mask | (1 << k) : mask), 0));
  return { masksOfType, firstsOfType: masksOfType.map((mask) => (mask === 0 ? steps : 31 - Math.clz32(mask & -mask))) };
}

/** A user's events of the scanned range collected and tallied. */
function tallyUser(events: UserEventRange, masksOfType: Int32Array, firstsOfType: Int32Array, user: UserSteps, tally: FunnelTally): void {
  const { startMs, endMs } = tally.query.range;
  user.begin();
  if (user.collectRange(events, startMs, endMs + tally.windowMs, endMs, masksOfType, firstsOfType) > 0) tally.addUser(user);
}

/** A share's users tallied (in a helper thread, or here when it failed). */
export function tallyShare(share: ColumnsShare): ShareTally {
  const tally = new FunnelTally(share.query, share.days);
  tallyColumns(share, new UserSteps(share.query.eventTypes.length, false, windowMsOf(share.query)), tally);
  return { entrants: tally.entrants, group: plainGroupTimes(tally.group) };
}

/** The share's users, each with its runs of the steps' types, in order of ordinal. */
function tallyColumns({ query, columns, stale, fromOrdinal, toOrdinal }: ColumnsShare, user: UserSteps, tally: FunnelTally): void {
  const userAt = Int32Array.from(columns, ({ users }) => {
    let at = 0;
    while (at < users.length && users[at]! < fromOrdinal) at++;
    return at;
  });
  for (;;) {
    // The next user with events of step 1.
    let ordinal = toOrdinal;
    for (let c = 0; c < columns.length; c++) {
      const { users, mask } = columns[c]!;
      if ((mask & 1) !== 0 && userAt[c]! < users.length) ordinal = Math.min(ordinal, users[userAt[c]!]!);
    }
    if (ordinal === toOrdinal) return;
    user.begin();
    for (let c = 0; c < columns.length; c++) {
      const { users, starts, times, positions, mask, first } = columns[c]!;
      let at = userAt[c]!;
      while (at < users.length && users[at]! < ordinal) at++;
      if (at < users.length && users[at] === ordinal) {
        user.addRun(times, positions, starts[at]!, starts[at + 1]!, mask, first);
        at++;
      }
      userAt[c] = at;
    }
    if (stale[ordinal] === 0) addRuns(user, tally, query);
  }
}

/** A user's runs of the steps' types added to `user`: ordered funnels follow them as they are, unordered ones merge them. */
function addRuns(user: UserSteps, tally: FunnelTally, query: TimelineFunnelQuery): void {
  const { startMs, endMs } = query.range;
  if (query.mode === 'ordered') {
    user.entriesOfRuns(startMs, endMs);
    tally.addEntries(user);
  } else if (user.collectRuns(startMs, endMs + windowMsOf(query), endMs) > 0) tally.addUser(user);
}
