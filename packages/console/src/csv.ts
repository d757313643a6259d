// CSV files the reader downloads, built in the page from an answer it already has.

/** A text cell a spreadsheet would run as a formula is prefixed with `'` (OWASP's advice on CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

function field(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** RFC 4180 text: fields separated by commas, lines by CRLF. */
export function toCsv(rows: readonly (readonly (string | number)[])[]): string {
  return rows.map((row) => row.map(field).join(',')).join('\r\n') + '\r\n';
}

/** Offers `text` as a download named `fileName`. */
export function downloadCsv(fileName: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.click();
  // The download has started by then; the object URL only holds memory.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
