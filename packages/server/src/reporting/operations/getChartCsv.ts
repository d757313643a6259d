// getChartCsv (`GET /api/3/chart/{chart_id}/csv`, specs/reporting/operations/getChartCsv.yaml):
// a saved chart's answer (saved-chart.ts) written as a CSV table.
import type { HandlerRequest, Reply } from '../../http/operations.js';
import type { ChartOperation } from '../charts.js';
import { type CsvTable, chartCsv } from '../csv.js';
import { LTV_WINDOWS } from '../runners/revenue-ltv.js';
import { type ChartEnv, savedChartAnswer } from './saved-chart.js';

export async function getChartCsv(request: HandlerRequest<'getChartCsv'>, env: ChartEnv): Promise<Reply<'getChartCsv'>> {
  const answer = await savedChartAnswer(request, env, { start: request.query.start, end: request.query.end });
  if ('reply' in answer) return answer.reply as Reply<'getChartCsv'>;
  const { chart, summary, body } = answer;
  const csv = chartCsv({ title: chart.title, metric: String(chart.query.m ?? summary), ...chartTable(chart.operation, body.data) });
  return { status: 200, body: { data: csv } };
}

/** A series' label: its group's value, else all users. */
function seriesLabelOf(seriesLabels: unknown[] | undefined, i: number): string {
  const label = seriesLabels?.[i];
  if (typeof label === 'string') return label;
  if (Array.isArray(label)) return label.slice(1).join(', ');
  return 'All users';
}

type Cohorts<T> = { seriesLabels?: unknown[]; series: { dates: string[]; values: Record<string, T> }[] };
/** A row per cohort date of each series (the series named before the date when there are several). */
function cohortRows<T>(data: Cohorts<T>, values: (cohort: T) => (number | null)[]): CsvTable['rows'] {
  return data.series.flatMap((series, i) =>
    series.dates.map((date) => ({ label: data.series.length > 1 ? `${seriesLabelOf(data.seriesLabels, i)}: ${date}` : date, values: values(new Map(Object.entries(series.values)).get(date)!) })),
  );
}

/** A cohort's columns: its users, paying users and total, then the LTV windows the runner answers. */
const LTV_COLUMNS = ['count', 'paid', 'total_amount', ...LTV_WINDOWS.map((days) => `r${days}d`)];

/**
 * A saved chart's answer as a table: one row per series (or funnel element), one column per x
 * value (or step); retention and revenue LTV a row per cohort.
 */
function chartTable(operation: ChartOperation, data: unknown): Omit<CsvTable, 'title' | 'metric'> {
  if (operation === 'getFunnel') {
    const elements = data as { events: string[]; groupValue: string; cumulativeRaw: number[] }[];
    return { header: ['Segment', ...(elements[0]?.events ?? [])], rows: elements.map((e) => ({ label: e.groupValue || 'All users', values: e.cumulativeRaw })) };
  }
  if (operation === 'getRetention') {
    const retention = data as Cohorts<{ count: number }[]>;
    const periods = Math.max(0, ...retention.series.flatMap((s) => Object.values(s.values).map((counts) => counts.length)));
    return { header: ['Cohort', ...Array.from({ length: periods }, (_, n) => `Period ${n}`)], rows: cohortRows(retention, (counts) => counts.map((c) => c.count)) };
  }
  if (operation === 'getRevenueLtv') {
    const ltv = data as Cohorts<Record<string, number>>;
    return { header: ['Cohort', ...LTV_COLUMNS], rows: cohortRows(ltv, (cohort) => {
      const values = new Map(Object.entries(cohort));
      return LTV_COLUMNS.map((column) => values.get(column) ?? null);
    }) };
  }
  const { xValues, series, seriesLabels } = data as { xValues: string[]; series: number[][]; seriesLabels?: unknown[] };
  return { header: ['Segment', ...xValues], rows: series.map((values, i) => ({ label: seriesLabelOf(seriesLabels, i), values })) };
}
