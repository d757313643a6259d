// One segmentation answer as the chart, the table and the CSV show it: the same numbers in each.
import type { EventSegmentation, SeriesLabel } from '@svc/client';
import type { ChartData } from '../chart.js';

/** A series' name: the event's for a single series, else its group-by values. */
export function seriesName(label: SeriesLabel, eventName: string): string {
  return typeof label === 'number' ? eventName : label.slice(1).join(' · ');
}

/** A period as the axis shows it: hours without seconds (`2026-11-01 13:00`), days as they are. */
const axisLabel = (period: string) => period.replace('T', ' ').replace(/:00$/, '');

export function segmentationChart(answer: EventSegmentation, eventName: string): ChartData {
  return {
    labels: answer.xValues.map(axisLabel),
    series: answer.series.map((values, index) => ({ name: seriesName(answer.seriesLabels[index]!, eventName), values })),
  };
}

export interface SegmentationRows {
  /** The periods' column, then one per series. */
  columns: string[];
  /** One row per period, then the whole range (each series' collapsed value). */
  rows: { header: string; values: number[] }[];
}

export function segmentationRows(answer: EventSegmentation, eventName: string): SegmentationRows {
  const names = answer.seriesLabels.map((label) => seriesName(label, eventName));
  return {
    columns: ['Period', ...names],
    rows: [
      ...answer.xValues.map((period, at) => ({ header: period, values: answer.series.map((values) => values[at]!) })),
      { header: 'Whole range', values: answer.seriesCollapsed.map(([collapsed]) => collapsed!.value) },
    ],
  };
}
