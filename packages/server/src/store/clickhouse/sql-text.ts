// SQL text of ClickHouse values and names, for statements written by hand.

/** A ClickHouse string literal. */
export const literal = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
export { integers } from '../dialect.js';
export const quoted = (column: string) => `\`${column.replace(/`/g, '')}\``;
