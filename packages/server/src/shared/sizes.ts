// Sizes given on the command line, in the units DuckDB reads (its memory limit takes the same text).

/** A size such as `512MB`, `2GB` or `1.5GiB` in bytes (decimal and binary units, as DuckDB reads them); undefined when it is not one. */
export function bytesOfSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.exec(text.trim());
  if (!match) return undefined;
  const unit = match[2]!.toLowerCase();
  const power = ['b', 'kb', 'mb', 'gb', 'tb'].indexOf(unit.replace('ib', 'b'));
  return Math.round(Number(match[1]) * (unit.endsWith('ib') ? 1024 : 1000) ** power);
}
