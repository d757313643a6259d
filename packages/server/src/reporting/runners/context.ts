// What every runner gets, and the series shape runners return before a handler writes it in
// its operation's answer.
import type { Dialect } from '../query/duckdb-dialect.js';
import { NONE } from '../query/model.js';

export interface RunnerContext {
  appId: number;
  timeZone: string;
  dialect: Dialect;
  query(sql: string): Promise<Record<string, unknown>[]>;
  queryChunks(sql: string): AsyncIterable<Record<string, unknown>[]>;
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

/** Rows keyed by `groups` (JSON of the group values) into series aligned on `xValues`, biggest `collapsed` first. */
export function alignSeries(
  xValues: string[],
  perBucket: { groups: string[]; bucket: string; value: number }[],
  collapsed: { groups: string[]; value: number }[],
  meta: { eventIndex: number; segmentIndex: number; limit: number; grouped: boolean },
): Series[] {
  const index = new Map(xValues.map((x, i) => [x, i]));
  const byGroup = new Map<string, Series>();
  // Ungrouped, the answer has its one series even without data.
  if (!meta.grouped) byGroup.set('[]', { groups: [], eventIndex: meta.eventIndex, segmentIndex: meta.segmentIndex, values: xValues.map(() => 0), collapsed: 0 });
  for (const { groups, value } of collapsed) {
    byGroup.set(JSON.stringify(groups), { ...(byGroup.get(JSON.stringify(groups)) ?? { groups, eventIndex: meta.eventIndex, segmentIndex: meta.segmentIndex, values: xValues.map(() => 0) }), collapsed: value });
  }
  for (const { groups, bucket, value } of perBucket) {
    const series = byGroup.get(JSON.stringify(groups));
    const at = index.get(bucket);
    if (series && at !== undefined) series.values[at] = value;
  }
  return [...byGroup.values()].sort((a, b) => b.collapsed - a.collapsed || compareGroups(a.groups, b.groups)).slice(0, meta.limit);
}

/** Ties between groups in code unit order: the same on every machine, whatever its locale. */
export const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const compareGroups = (a: string[], b: string[]) => compareText(JSON.stringify(a), JSON.stringify(b));

/** The group values of a row's `p0`, `p1`... columns. */
export function groupsOf(row: Record<string, unknown>, count: number): string[] {
  return Array.from({ length: count }, (_, i) => (row[`p${i}`] === null || row[`p${i}`] === undefined ? NONE : String(row[`p${i}`])));
}

export const groupColumns = (count: number) => Array.from({ length: count }, (_, i) => `p${i}`);
