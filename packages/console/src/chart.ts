// Charts with uPlot over named categories (periods, funnel steps): lines, or bars side by side
// when there are several series. The canvas is decoration for sighted readers; the table next
// to it holds the same numbers for everyone.
import uPlot from 'uplot';
import { formatNumber } from './format.js';

export interface ChartSeries {
  name: string;
  values: (number | null)[];
}

export interface ChartData {
  /** The x-axis categories, in order. */
  labels: string[];
  series: ChartSeries[];
}

/** A vertical line across the plot at `at` (x scale units: category indexes, fractions between them), labelled. */
export interface ChartMarker {
  at: number;
  label: string;
}

export interface ChartOptions {
  kind: 'line' | 'bars';
  /** The y axis' title: what the values count. */
  valueName: string;
  /** Text above each bar (series index, category index), for bars. */
  barLabel?: (series: number, category: number) => string;
  /** Annotations on the x axis (time series). */
  markers?: ChartMarker[];
}

// Dark enough for 3:1 against the white background (graphics contrast), told apart by hue.
const PALETTE = ['#1d4ed8', '#c2410c', '#047857', '#7e22ce', '#b91c1c', '#0e7490', '#a16207', '#4d7c0f', '#be185d', '#374151'];
const HEIGHT = 320;
/** Share of a category's width its bars take, together. */
const BAR_SPAN = 0.8;
// uPlot's full build has every path builder; its types make each one optional.
const barsPath = uPlot.paths.bars!;

const drawn = new WeakMap<HTMLElement, { chart: uPlot; resize: ResizeObserver }>();

/** Where bar `index` of `count` starts in category `x` (x scale units): the bars side by side around x. */
const barStart = (x: number, index: number, count: number) => x - BAR_SPAN / 2 + (index * BAR_SPAN) / count;

function sideBySide(index: number, count: number): uPlot.Series.PathBuilder {
  const scaleValue = 1 as uPlot.Series.BarsPathBuilderFacetUnit;
  return barsPath({
    disp: {
      x0: { unit: scaleValue, values: (u) => (u.data[0] as number[]).map((x) => barStart(x, index, count)) },
      size: { unit: scaleValue, values: () => [BAR_SPAN / count] },
    },
  });
}

/** Draws `label`'s text above every bar, once uPlot has drawn them. */
function labelBars(label: NonNullable<ChartOptions['barLabel']>): (u: uPlot) => void {
  return (u) => {
    const count = u.data.length - 1;
    const { ctx } = u;
    ctx.save();
    ctx.font = `${12 * uPlot.pxRatio}px system-ui, sans-serif`;
    ctx.fillStyle = '#111827';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    for (let series = 0; series < count; series++) {
      u.data[series + 1]!.forEach((value, x) => {
        if (value == null) return;
        const middle = barStart(x, series, count) + BAR_SPAN / count / 2;
        ctx.fillText(label(series, x), u.valToPos(middle, 'x', true), u.valToPos(value, 'y', true) - 4 * uPlot.pxRatio);
      });
    }
    ctx.restore();
  };
}

const MARKER_COLOR = '#7e22ce';

/** Draws each marker as a dashed vertical line with its label at the top, over the series. */
function drawMarkers(markers: ChartMarker[]): (u: uPlot) => void {
  return (u) => {
    const { ctx, bbox } = u;
    ctx.save();
    ctx.strokeStyle = ctx.fillStyle = MARKER_COLOR;
    ctx.lineWidth = 1.5 * uPlot.pxRatio;
    ctx.setLineDash([5 * uPlot.pxRatio, 4 * uPlot.pxRatio]);
    ctx.font = `${12 * uPlot.pxRatio}px system-ui, sans-serif`;
    ctx.textBaseline = 'top';
    for (const { at, label } of markers) {
      const x = u.valToPos(at, 'x', true);
      ctx.beginPath();
      ctx.moveTo(x, bbox.top);
      ctx.lineTo(x, bbox.top + bbox.height);
      ctx.stroke();
      ctx.fillText(label, x + 4 * uPlot.pxRatio, bbox.top + 2 * uPlot.pxRatio);
    }
    ctx.restore();
  };
}

function seriesOptions(series: ChartSeries, index: number, count: number, kind: ChartOptions['kind']): uPlot.Series {
  const color = PALETTE[index % PALETTE.length]!;
  if (kind === 'line') return { label: series.name, stroke: color, width: 2, points: { show: true, size: 6, fill: color } };
  return { label: series.name, stroke: color, fill: color, width: 0, paths: sideBySide(index, count), points: { show: false } };
}

/** Draws `chartData` into `container` (before its caption), replacing the chart drawn there before. */
export function drawChart(container: HTMLElement, chartData: ChartData, { kind, valueName, barLabel, markers = [] }: ChartOptions): void {
  clearChart(container);
  const { labels, series } = chartData;
  const options: uPlot.Options = {
    width: Math.max(container.clientWidth, 300),
    height: HEIGHT,
    legend: { live: false },
    cursor: { points: { show: kind === 'line' } },
    scales: {
      x: { time: false, range: () => [-0.5, labels.length - 0.5] },
      y: { range: (_u, _min, max) => uPlot.rangeNum(0, Math.max(max, 1), 0.1, true) },
    },
    axes: [
      { space: 90, incrs: [1, 2, 3, 5, 7, 10, 14, 20, 30, 50, 100], values: (_u, splits) => splits.map((at) => labels[at] ?? '') },
      { label: valueName, size: 70, values: (_u, splits) => splits.map(formatNumber) },
    ],
    series: [{ label: 'x' }, ...series.map((one, index) => seriesOptions(one, index, series.length, kind))],
    hooks: { draw: [...(kind === 'bars' && barLabel ? [labelBars(barLabel)] : []), ...(markers.length > 0 ? [drawMarkers(markers)] : [])] },
  };
  const data: uPlot.AlignedData = [labels.map((_label, index) => index), ...series.map((one) => one.values)];
  // Before the container's caption, hidden from screen readers (the table says it all).
  const chart = new uPlot(options, data, (self, init) => {
    self.root.setAttribute('aria-hidden', 'true');
    container.prepend(self.root);
    init();
  });
  const resize = new ResizeObserver(() => {
    const width = Math.max(container.clientWidth, 300);
    if (width !== chart.width) chart.setSize({ width, height: HEIGHT });
  });
  resize.observe(container);
  drawn.set(container, { chart, resize });
}

export function clearChart(container: HTMLElement): void {
  const previous = drawn.get(container);
  previous?.resize.disconnect();
  previous?.chart.destroy();
  drawn.delete(container);
}
