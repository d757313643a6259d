// getChartCsv (`GET /api/3/chart/{chart_id}/csv`, specs/reporting/operations/getChartCsv.yaml):
// a saved chart's answer as CSV. The chart's stored query is decoded as its operation's request
// and answered by that operation (with its limits), then written as a table.
import { operations, parseOperationRequest } from '@svc/openapi-validation';
import type { HandlerRequest, Reply } from '../../http/operations.js';
import { localDateLabel } from '../../model/time.js';
import { type ChartOperation, type SavedChart, chartQueryString } from '../charts.js';
import { type CsvTable, chartCsv } from '../csv.js';

export interface ChartEnv {
  /** The saved charts of a project. */
  charts(appId: number): SavedChart[];
  /** The answer of a chart's operation to a request. */
  answer(operation: ChartOperation, request: HandlerRequest<ChartOperation>): Promise<Reply<ChartOperation>>;
}

export async function getChartCsv(request: HandlerRequest<'getChartCsv'>, env: ChartEnv): Promise<Reply<'getChartCsv'>> {
  const project = request.caller.project!;
  const chart = env.charts(project.app_id).find((c) => c.id === request.path.chart_id);
  if (!chart) return { status: 404, body: { code: 404, error: `No saved chart ${request.path.chart_id} in this project` } };
  const today = localDateLabel(project.time_zone ?? 'UTC', request.receivedAt).replace(/-/g, '');
  const monthAgo = localDateLabel(project.time_zone ?? 'UTC', request.receivedAt - 29 * 86_400_000).replace(/-/g, '');
  // A chart saved without a range (a data table) covers the last 30 days unless the request gives one.
  const query = chartQueryString(chart, { start: request.query.start ?? (chart.query.start === undefined ? monthAgo : undefined), end: request.query.end ?? (chart.query.end === undefined ? today : undefined) });
  const ref = operations().find((o) => o.op.operationId === chart.operation)!;
  const parsed = parseOperationRequest(ref, { query, headers: new Map(), pathParams: {}, body: undefined });
  const problems = parsed.problems.filter((p) => p.where !== 'credentials');
  if (problems.length > 0) return { status: 400, body: { code: 400, error: `The saved query of chart ${chart.id} is invalid: ${problems.map((p) => `${p.where}: ${p.message}`).join('; ')}` } };
  const decoded = Object.fromEntries([...parsed.params].filter(([key]) => key.startsWith('query:')).map(([key, value]) => [key.slice('query:'.length), value]));
  const answer = await env.answer(chart.operation, { ...request, query: decoded } as never);
  if (answer.status === 400 || answer.status === 429) return answer as Reply<'getChartCsv'>;
  if (answer.status !== 200) throw new Error(`chart ${chart.id}: ${chart.operation} answered ${answer.status}`);
  const csv = chartCsv({ title: chart.title, metric: String(chart.query.m ?? ref.op.summary), ...chartTable(chart.operation, (answer.body as { data: unknown }).data) });
  return { status: 200, body: { data: csv } };
}

/** A saved chart's answer as a table: one row per series (or funnel element), one column per x value (or step). */
function chartTable(operation: ChartOperation, data: unknown): Omit<CsvTable, 'title' | 'metric'> {
  if (operation === 'getFunnel') {
    const elements = data as { events: string[]; groupValue: string; cumulativeRaw: number[] }[];
    return { header: ['Segment', ...(elements[0]?.events ?? [])], rows: elements.map((e) => ({ label: e.groupValue || 'All users', values: e.cumulativeRaw })) };
  }
  const { xValues, series, seriesLabels } = data as { xValues: string[]; series: number[][]; seriesLabels?: unknown[] };
  const labelOf = (i: number) => {
    const label = seriesLabels?.[i];
    if (typeof label === 'string') return label;
    if (Array.isArray(label)) return label.slice(1).join(', ');
    return 'All users';
  };
  return { header: ['Segment', ...xValues], rows: series.map((values, i) => ({ label: labelOf(i), values })) };
}
