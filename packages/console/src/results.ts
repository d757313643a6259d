// A chart and the table(s) of its numbers, shown and cleared together: the figure
// `PREFIX-chart` with its caption `PREFIX-caption`, the tables in `PREFIX-table`, and for a
// time series the list of its annotations, `PREFIX-annotations`.
import { listAnnotations, type PlacedAnnotation } from './annotations.js';
import { clearChart, drawChart, type ChartData, type ChartOptions } from './chart.js';
import { byId } from './page.js';
import { renderTable, type TableData } from './table.js';

export interface ChartPanel {
  show(chartData: ChartData, options: ChartOptions, caption: string, tables: TableData[], annotations?: PlacedAnnotation[]): void;
  clear(): void;
}

export function chartPanel(prefix: string): ChartPanel {
  const chart = byId(`${prefix}-chart`);
  const caption = byId(`${prefix}-caption`);
  const tables = byId(`${prefix}-table`);
  const annotated = document.getElementById(`${prefix}-annotations`);
  return {
    show(chartData, options, text, tableData, annotations = []) {
      drawChart(chart, chartData, { ...options, markers: annotations });
      caption.textContent = text;
      tables.replaceChildren(...tableData.map(renderTable));
      if (annotated) listAnnotations(annotated, annotations);
    },
    clear() {
      clearChart(chart);
      caption.textContent = '';
      tables.replaceChildren();
      if (annotated) listAnnotations(annotated, []);
    },
  };
}
