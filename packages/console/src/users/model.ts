// The answers of `GET /api/2/users` and `GET /api/2/sessions/length` as charts and tables.
import type { SessionLengthDistribution, UserCounts } from '@svc/client';
import type { ChartData } from '../chart.js';
import { formatDuration, formatNumber } from '../format.js';
import type { TableData } from '../table.js';

/** Without a group-by the answer has its one series: the users of each period, then of the whole range (each once). */
export function usersChart(answer: UserCounts, measure: string): ChartData {
  return { labels: answer.xValues, series: [{ name: measure, values: answer.series[0] ?? [] }] };
}

export function usersTable(answer: UserCounts, measure: string, caption: string): TableData {
  const values = answer.series[0] ?? [];
  return {
    caption,
    columns: ['Period', measure],
    rows: [
      ...answer.xValues.map((period, at) => ({ header: period, cells: [formatNumber(values[at] ?? 0)] })),
      { header: 'Whole range', cells: [formatNumber(answer.seriesCollapsed[0]?.[0] ?? 0)] },
    ],
  };
}

const seconds = (text: string) => (Number(text) === 0 ? '0' : formatDuration(Number(text) * 1000));

/** A bin as the API labels it (`180s-600s`, seconds) in the reader's units: `3 min – 10 min`. */
export function binLabel(bin: string): string {
  const [from = '', to = ''] = bin.split('-').map((bound) => bound.replace(/s$/, ''));
  return `${seconds(from)} – ${seconds(to)}`;
}

export function sessionsChart(answer: SessionLengthDistribution): ChartData {
  return { labels: answer.xValues.map(binLabel), series: [{ name: 'Sessions', values: answer.series[0] ?? [] }] };
}

export function sessionsTable(answer: SessionLengthDistribution, caption: string): TableData {
  const values = answer.series[0] ?? [];
  return { caption, columns: ['Session length', 'Sessions'], rows: answer.xValues.map((bin, at) => ({ header: binLabel(bin), cells: [formatNumber(values[at] ?? 0)] })) };
}
