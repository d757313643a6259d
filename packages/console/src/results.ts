// A chart and the table(s) of its numbers, shown and cleared together: the figure
// `PREFIX-chart` with its caption `PREFIX-caption`, and the tables in `PREFIX-table`.
import { clearChart, drawChart, type ChartData, type ChartOptions } from './chart.js';
import { byId } from './page.js';
import { renderTable, type TableData } from './table.js';

export interface ChartPanel {
  show(chartData: ChartData, options: ChartOptions, caption: string, tables: TableData[]): void;
  clear(): void;
}

export function chartPanel(prefix: string): ChartPanel {
  const chart = byId(`${prefix}-chart`);
  const caption = byId(`${prefix}-caption`);
  const tables = byId(`${prefix}-table`);
  return {
    show(chartData, options, text, tableData) {
      drawChart(chart, chartData, options);
      caption.textContent = text;
      tables.replaceChildren(...tableData.map(renderTable));
    },
    clear() {
      clearChart(chart);
      caption.textContent = '';
      tables.replaceChildren();
    },
  };
}
