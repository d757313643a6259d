// SQL text of ClickHouse values and names, for statements written by hand.

/** A ClickHouse string literal. */
export const literal = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
export const integers = (values: Iterable<number>) => [...values].map((value) => String(Math.trunc(value))).join(', ');
export const quoted = (column: string) => `\`${column.replace(/`/g, '')}\``;
