// Data tables: a caption, column headers, and a header cell per row (what screen readers
// announce with each number).

export interface TableData {
  caption: string;
  /** Headers of the columns, the row headers' column first. */
  columns: string[];
  rows: { header: string; cells: string[] }[];
}

function cell(tag: 'th' | 'td', text: string, scope?: 'row' | 'col'): HTMLTableCellElement {
  const element = document.createElement(tag);
  element.textContent = text;
  if (scope) element.scope = scope;
  return element;
}

function tableRow(cells: HTMLTableCellElement[]): HTMLTableRowElement {
  const row = document.createElement('tr');
  row.append(...cells);
  return row;
}

export function renderTable(data: TableData): HTMLTableElement {
  const table = document.createElement('table');
  table.createCaption().textContent = data.caption;
  table.createTHead().append(tableRow(data.columns.map((column) => cell('th', column, 'col'))));
  table.createTBody().append(...data.rows.map(({ header, cells }) => tableRow([cell('th', header, 'row'), ...cells.map((text) => cell('td', text))])));
  return table;
}
