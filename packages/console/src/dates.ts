// Dates as the date inputs hold them (`YYYY-MM-DD`) and as the reporting API takes them (`YYYYMMDD`).

/** `2026-11-01` → `20261101`. */
export function reportDate(inputValue: string): string {
  return inputValue.replaceAll('-', '');
}

/** The local calendar date of `date`, written `YYYY-MM-DD`. */
export function inputDate(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** The last `days` days up to `today`, both included. */
export function lastDays(today: Date, days: number): { start: string; end: string } {
  const start = new Date(today);
  start.setDate(start.getDate() - (days - 1));
  return { start: inputDate(start), end: inputDate(today) };
}
