// Saved charts as CSV the way the platform writes them: CRLF lines, every cell quoted, text
// cells prefixed with a TAB inside the quotes; the chart's title and metric, each followed
// by a blank line, before the header row.

export interface CsvTable {
  title: string;
  metric: string;
  /** Header of the first column (what each row is), then one per column. */
  header: string[];
  /** A null value is an empty cell (nothing to show yet). */
  rows: { label: string; values: (number | null)[] }[];
}

const quote = (cell: string) => `"${cell.replace(/"/g, '""')}"`;
const text = (cell: string) => quote(`\t${cell}`);

export function chartCsv(table: CsvTable): string {
  const lines = [text(table.title), '', text(table.metric), '', table.header.map(text).join(','), ...table.rows.map((row) => [text(row.label), ...row.values.map((v) => quote(v === null ? '' : String(v)))].join(','))];
  return `${lines.join('\r\n')}\r\n`;
}
