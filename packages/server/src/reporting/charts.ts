// Saved charts: a title and a stored query of one reporting operation, per project, kept in
// `<data dir>/charts/<app_id>.json` and set with `svc-server admin save-chart`.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The operations a chart can store (every reporting operation but the chart export itself). */
export const CHART_OPERATIONS = [
  'getUserCounts',
  'getSessionLengthDistribution',
  'getAverageSessionLength',
  'getAverageSessionsPerUser',
  'getUserComposition',
  'getEventSegmentation',
  'getFunnel',
  'getRetention',
  'getRevenueLtv',
  'getRealtimeActiveUsers',
] as const;
export type ChartOperation = (typeof CHART_OPERATIONS)[number];

export interface SavedChart {
  id: string;
  title: string;
  operation: ChartOperation;
  /** Query parameters as the operation takes them: JSON parameters as values, the others as strings or numbers; repeated ones as arrays. */
  query: Record<string, unknown>;
}

const chartFile = (dataDir: string, appId: number) => join(dataDir, 'charts', `${appId}.json`);

export function savedCharts(dataDir: string, appId: number): SavedChart[] {
  const file = chartFile(dataDir, appId);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as SavedChart[]) : [];
}

/** Adds (or replaces, same id) a chart; returns it with its id. */
export function saveChart(dataDir: string, appId: number, chart: Omit<SavedChart, 'id'> & { id?: string }): SavedChart {
  if (!(CHART_OPERATIONS as readonly string[]).includes(chart.operation)) throw new Error(`operation must be one of ${CHART_OPERATIONS.join(', ')}`);
  if (typeof chart.title !== 'string' || chart.title === '') throw new Error('title must be a non-empty string');
  if (chart.query === null || typeof chart.query !== 'object' || Array.isArray(chart.query)) throw new Error('query must be an object of query parameters');
  const saved: SavedChart = { id: chart.id ?? randomBytes(4).toString('hex'), title: chart.title, operation: chart.operation, query: chart.query };
  const file = chartFile(dataDir, appId);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify([...savedCharts(dataDir, appId).filter((c) => c.id !== saved.id), saved], null, 2));
  renameSync(`${file}.tmp`, file);
  return saved;
}

/** The chart's query as a URL query string (JSON parameters as JSON text), with `start`/`end` overridden when given. */
export function chartQueryString(chart: SavedChart, range: { start?: string; end?: string }): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...chart.query, ...Object.fromEntries(Object.entries(range).filter(([, v]) => v !== undefined)) })) {
    for (const item of Array.isArray(value) && name === 'e' ? value : [value]) query.append(name, typeof item === 'string' || typeof item === 'number' ? String(item) : JSON.stringify(item));
  }
  return query;
}
