/**
 * Parses CSV text (RFC 4180: quoted fields with `""` escapes and embedded line breaks,
 * `\n` or `\r\n` line ends) into rows of fields. A final line end does not add an empty row.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endField = () => {
    row.push(field);
    field = '';
  };
  const endRow = () => {
    endField();
    rows.push(row);
    row = [];
  };
  while (i < text.length) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (char === '"') quoted = false;
      else field += char;
      i++;
      continue;
    }
    if (char === '"' && field === '') quoted = true;
    else if (char === ',') endField();
    else if (char === '\n') endRow();
    else if (char === '\r' && text[i + 1] === '\n') {
      endRow();
      i++;
    } else field += char;
    i++;
  }
  if (quoted) throw new SyntaxError('CSV ends inside a quoted field');
  if (field !== '' || row.length > 0) endRow();
  return rows;
}
