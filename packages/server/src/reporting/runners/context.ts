// What every runner gets, and the series shape runners return before a handler writes it in
// its operation's answer.
import type { Dialect } from '../../store/dialect.js';
import { NONE } from '../../model/query.js';
import type { FunnelGroup } from '../../model/funnel-times.js';
import type { TimelineCounts, TimelineCountsQuery } from '../../store/timelines/counts.js';
import type { TimelineFunnelQuery } from '../../store/timelines/funnel.js';

export interface RunnerContext {
  appId: number;
  timeZone: string;
  dialect: Dialect;
  query(sql: string): Promise<Record<string, unknown>[]>;
  queryChunks(sql: string): AsyncIterable<Record<string, unknown>[]>;
  /** A plain funnel from the engine's per-user timelines, when the engine keeps them (undefined: not ready, the SQL answers). */
  timelineFunnel?(query: TimelineFunnelQuery): Promise<FunnelGroup[] | undefined>;
  /** Users or events per bucket of a plain scan from the same timelines (undefined: the SQL answers). */
  timelineCounts?(query: TimelineCountsQuery): Promise<TimelineCounts | undefined>;
  /** Current time, ms (tests move it). */
  now(): number;
}

/** One series: a value per bucket, the value over the whole range, and what it counts. */
export interface Series {
  /** Group-by values (`(none)` for a missing value); empty when not grouped. */
  groups: string[];
  eventIndex: number;
  segmentIndex: number;
  values: number[];
  collapsed: number;
}

export interface SeriesResult {
  xValues: string[];
  series: Series[];
}

/**
 * Rows into series aligned on `xValues`: the `limit` groups with the biggest `collapsed` first,
 * then their values per bucket. Only the kept groups get values, found without building a key
 * text per row: a large group-by has many rows, and this runs on the event loop. Plain loops, no
 * destructuring: a server's first grouped answer runs this before V8 optimizes it, where
 * iterating and destructuring cost most.
 */
export function alignSeries(
  xValues: string[],
  perBucket: { groups: string[]; bucket: string; value: number }[],
  collapsed: { groups: string[]; value: number }[],
  meta: { eventIndex: number; segmentIndex: number; limit: number; grouped: boolean },
): Series[] {
  // By the groups' JSON, which also breaks ties between groups in code unit order.
  const candidates = new Map<string, { key: string; groups: string[]; collapsed: number }>();
  // Ungrouped, the answer has its one series even without data.
  if (!meta.grouped) candidates.set('[]', { key: '[]', groups: [], collapsed: 0 });
  for (let i = 0; i < collapsed.length; i++) {
    const row = collapsed[i]!;
    const key = JSON.stringify(row.groups);
    candidates.set(key, { key, groups: row.groups, collapsed: row.value });
  }
  const kept = [...candidates.values()]
    .sort((a, b) => b.collapsed - a.collapsed || compareText(a.key, b.key))
    .slice(0, meta.limit)
    .map((candidate): Series => ({ groups: candidate.groups, eventIndex: meta.eventIndex, segmentIndex: meta.segmentIndex, values: new Array<number>(xValues.length).fill(0), collapsed: candidate.collapsed }));
  const index = new Map<string, number>();
  for (let i = 0; i < xValues.length; i++) index.set(xValues[i]!, i);
  const seriesOf = groupLookup(kept);
  for (let i = 0; i < perBucket.length; i++) {
    const row = perBucket[i]!;
    const series = seriesOf(row.groups);
    const at = index.get(row.bucket);
    if (series && at !== undefined) series.values[at] = row.value;
  }
  return kept;
}

type Level = Map<string, { series?: Series; next?: Level }>;

/** The series of some group values, through a Map per group-by level (series of one call have as many groups each). */
function groupLookup(series: Series[]): (groups: string[]) => Series | undefined {
  const root: Level = new Map();
  let ungrouped: Series | undefined;
  for (const one of series) {
    if (one.groups.length === 0) ungrouped ??= one;
    let level = root;
    for (let i = 0; i < one.groups.length; i++) {
      let node = level.get(one.groups[i]!);
      if (!node) level.set(one.groups[i]!, (node = {}));
      if (i === one.groups.length - 1) node.series = one;
      else level = node.next ??= new Map();
    }
  }
  return (groups) => {
    if (groups.length === 0) return ungrouped;
    let level: Level | undefined = root;
    for (let i = 0; i < groups.length - 1 && level; i++) level = level.get(groups[i]!)?.next;
    return level?.get(groups[groups.length - 1]!)?.series;
  };
}

/** Ties between groups in code unit order: the same on every machine, whatever its locale. */
export const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The group values of a row's `p0`, `p1`... columns. */
export function groupsOf(row: Record<string, unknown>, count: number): string[] {
  return Array.from({ length: count }, (_, i) => (row[`p${i}`] === null || row[`p${i}`] === undefined ? NONE : String(row[`p${i}`])));
}

export const groupColumns = (count: number) => Array.from({ length: count }, (_, i) => `p${i}`);
