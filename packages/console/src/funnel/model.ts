// One funnel answer as the chart and the tables show it: users per step, conversion from the
// first step and from the previous one, and the median time from the previous step.
import type { FunnelSeries } from '@svc/client';
import type { ChartData } from '../chart.js';
import { formatDuration, formatNumber, formatPercent } from '../format.js';
import type { TableData } from '../table.js';

export const groupName = (funnel: FunnelSeries): string => funnel.groupValue || 'All users';

export function funnelChart(funnels: readonly FunnelSeries[], stepNames: string[]): ChartData {
  return { labels: stepNames, series: funnels.map((funnel) => ({ name: groupName(funnel), values: funnel.cumulativeRaw })) };
}

/** The label of a bar: the share of the funnel's entrants who reached the step. */
export const conversionLabel = (funnels: readonly FunnelSeries[]) => (series: number, step: number) => formatPercent(funnels[series]!.cumulative[step]!);

export const FUNNEL_COLUMNS = ['Step', 'Users', 'Conversion', 'From previous step', 'Median time from previous step'];

export function funnelTable(funnel: FunnelSeries, stepNames: string[]): TableData {
  const entered = funnel.cumulativeRaw[0]!;
  const completed = funnel.cumulative[stepNames.length - 1]!;
  return {
    caption: `${groupName(funnel)}: ${formatNumber(entered)} users entered, ${formatPercent(completed)} completed`,
    columns: FUNNEL_COLUMNS,
    rows: stepNames.map((name, step) => {
      const reached = funnel.cumulativeRaw[step]!;
      const fromPrevious = step === 0 ? '—' : formatPercent(funnel.stepByStep[step]!);
      const median = step === 0 || reached === 0 ? '—' : formatDuration(funnel.medianTransTimes[step]!);
      return { header: `${step + 1}. ${name}`, cells: [formatNumber(reached), formatPercent(funnel.cumulative[step]!), fromPrevious, median] };
    }),
  };
}
