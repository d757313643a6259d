// Numbers as the tables and axes show them, in the reader's locale.

const counts = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
const percents = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });

export const formatNumber = (value: number): string => counts.format(value);
export const formatPercent = (fraction: number): string => percents.format(fraction);

const UNITS: [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1000],
];

/** A time in milliseconds in its two largest units (`1 h 25 min`, `42 s`), below a second in ms. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000) * 1000;
  for (const [unit, size] of UNITS) {
    const whole = Math.floor(rest / size);
    rest -= whole * size;
    if (whole > 0 || parts.length > 0) parts.push(`${whole} ${unit}`);
    if (parts.length === 2) break;
  }
  return parts.filter((part) => !part.startsWith('0 ')).join(' ');
}
