// A retention answer as the chart and the table show it: the share of each cohort's users who
// came back N days (weeks, months) after they started, over all cohorts and cohort by cohort.
import type { ReportingComponents } from '@svc/client';
import type { ChartData } from '../chart.js';
import { formatNumber, formatPercent } from '../format.js';
import type { TableData } from '../table.js';
import type { RetentionInterval } from './query.js';

type RetentionSeries = ReportingComponents['schemas']['RetentionSeries'];
type RetentionCount = ReportingComponents['schemas']['RetentionCount'];

const UNITS: Record<RetentionInterval, string> = { 1: 'Day', 7: 'Week', 30: 'Month' };

/** The columns after the cohort's users: `Day 0`, `Day 1`… */
export const retentionColumns = (retention: RetentionSeries, interval: RetentionInterval): string[] =>
  retention.combined.slice(1).map((_column, at) => `${UNITS[interval]} ${at}`);

/** Retained users in percent of those who could return in the column (none: no point). */
const percent = ({ count, outof }: RetentionCount) => (outof === 0 ? null : (count / outof) * 100);

export function retentionChart(retention: RetentionSeries, interval: RetentionInterval): ChartData {
  return { labels: retentionColumns(retention, interval), series: [{ name: 'All cohorts', values: retention.combined.slice(1).map(percent) }] };
}

/** `12 (30%)`, and `*` when users may still return in the column. */
const retained = (cell: RetentionCount) => `${formatNumber(cell.count)} (${formatPercent(cell.outof === 0 ? 0 : cell.count / cell.outof)})${cell.incomplete ? ' *' : ''}`;

export function retentionTable(retention: RetentionSeries, interval: RetentionInterval, caption: string): TableData {
  const columns = retentionColumns(retention, interval);
  const row = (header: string, cells: RetentionCount[]) => ({
    header,
    cells: [formatNumber(cells[0]?.count ?? 0), ...columns.map((_column, at) => (cells[at + 1] ? retained(cells[at + 1]!) : '—'))],
  });
  return {
    caption: `${caption} (* not over yet: users may still return)`,
    columns: ['Cohort', 'Users', ...columns],
    rows: [row('All cohorts', retention.combined), ...retention.dates.map((cohort) => row(cohort, retention.values[cohort] ?? []))],
  };
}
