// getChartCsv (`GET /api/3/chart/{chart_id}/csv`, specs/reporting/operations/getChartCsv.yaml):
// a saved chart's answer (saved-chart.ts) written as a CSV table.
import type { HandlerRequest, Reply } from '../../http/operations.js';
import type { ChartOperation } from '../charts.js';
import { type CsvTable, chartCsv } from '../csv.js';
import { type ChartEnv, savedChartAnswer } from './saved-chart.js';

export async function getChartCsv(request: HandlerRequest<'getChartCsv'>, env: ChartEnv): Promise<Reply<'getChartCsv'>> {
  const answer = await savedChartAnswer(request, env, { start: request.query.start, end: request.query.end });
  if ('reply' in answer) return answer.reply as Reply<'getChartCsv'>;
  const { chart, summary, body } = answer;
  const csv = chartCsv({ title: chart.title, metric: String(chart.query.m ?? summary), ...chartTable(chart.operation, body.data) });
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
