// A saved chart's answer, shared by its exports (getChartCsv as CSV, getChartResults as JSON):
// the chart's stored query is decoded as its operation's request and answered by that
// operation, with its limits.
import { operations, parseOperationRequest } from '@svc/openapi-validation';
import type { HandlerRequest, Reply } from '../../http/operations.js';
import { localDateLabel } from '../../model/time.js';
import { type ChartOperation, type SavedChart, chartQueryString } from '../charts.js';

export interface ChartEnv {
  /** The saved charts of a project. */
  charts(appId: number): SavedChart[];
  /** The answer of a chart's operation to a request. */
  answer(operation: ChartOperation, request: HandlerRequest<ChartOperation>): Promise<Reply<ChartOperation>>;
}

type ChartRequest = HandlerRequest<'getChartCsv' | 'getChartResults'>;
type ErrorReply = { status: 400 | 404 | 429; body: { code: number; error: string } };

/** The answer of the chart's operation (its 200 body), or the reply that stands instead (404, 400, 429). */
export async function savedChartAnswer(
  request: ChartRequest,
  env: ChartEnv,
  range: { start?: string; end?: string },
): Promise<{ chart: SavedChart; summary: string | undefined; body: { data: unknown } } | { reply: ErrorReply }> {
  const project = request.caller.project!;
  const chart = env.charts(project.app_id).find((c) => c.id === request.path.chart_id);
  if (!chart) return { reply: { status: 404, body: { code: 404, error: `No saved chart ${request.path.chart_id} in this project` } } };
  const today = localDateLabel(project.time_zone ?? 'UTC', request.receivedAt).replace(/-/g, '');
  const monthAgo = localDateLabel(project.time_zone ?? 'UTC', request.receivedAt - 29 * 86_400_000).replace(/-/g, '');
  // A chart saved without a range (a data table) covers the last 30 days unless the request gives one.
  const query = chartQueryString(chart, { start: range.start ?? (chart.query.start === undefined ? monthAgo : undefined), end: range.end ?? (chart.query.end === undefined ? today : undefined) });
  const ref = operations().find((o) => o.op.operationId === chart.operation)!;
  const parsed = parseOperationRequest(ref, { query, headers: new Map(), pathParams: {}, body: undefined });
  const problems = parsed.problems.filter((p) => p.where !== 'credentials');
  if (problems.length > 0) return { reply: { status: 400, body: { code: 400, error: `The saved query of chart ${chart.id} is invalid: ${problems.map((p) => `${p.where}: ${p.message}`).join('; ')}` } } };
  const decoded = Object.fromEntries([...parsed.params].filter(([key]) => key.startsWith('query:')).map(([key, value]) => [key.slice('query:'.length), value]));
  const answer = await env.answer(chart.operation, { ...request, query: decoded } as never);
  if (answer.status === 400 || answer.status === 429) return { reply: answer as ErrorReply };
  if (answer.status !== 200) throw new Error(`chart ${chart.id}: ${chart.operation} answered ${answer.status}`);
  return { chart, summary: ref.op.summary, body: answer.body as { data: unknown } };
}
