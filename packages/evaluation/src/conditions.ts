// Condition matching of the official SDKs' engine (experiment-core `EvaluationEngine`:
// matchCondition, matchNull, matchSet, matchString and their coercions). Filter values are
// always strings; the selected property value is coerced to a string (objects and arrays as
// JSON), or to a string set for the set operators.
//
// Where experiment-core's JavaScript port and the Kotlin evaluation-core (used for remote
// evaluation) differ because of a slip in the port, this follows evaluation-core:
// - only an absent, null or empty-string value is missing (the JS `select` also drops 0 and
//   false, so `is false` could never match a boolean property);
// - a non-numeric value under `less`…`greater or equal` falls back to string comparison (the
//   JS `Number(value) ?? undefined` yields NaN, never undefined, so it never falls back);
// - a string holding a JSON array is read as that array by the set operators (the JS port maps
//   the unparsed string).
// Elsewhere it follows experiment-core JS: regex operators search (RegExp.exec, not a full
// match) and a missing value fails `regex does not match` and `set is not`.
import type { EvaluationCondition, EvaluationOperator } from './format.js';
import { compareSemanticVersions, parseSemanticVersion } from './semantic-version.js';

const NONE = '(none)';

const SET_OPERATORS: ReadonlySet<EvaluationOperator> = new Set([
  'set is',
  'set is not',
  'set contains',
  'set does not contain',
  'set contains any',
  'set does not contain any',
]);

const MATCH_WHEN_NONE_LISTED: ReadonlySet<EvaluationOperator> = new Set([
  'is',
  'contains',
  'less',
  'less or equal',
  'greater',
  'greater or equal',
  'version less',
  'version less or equal',
  'version greater',
  'version greater or equal',
  'set is',
  'set contains',
  'set contains any',
]);

const MATCH_WHEN_NONE_NOT_LISTED: ReadonlySet<EvaluationOperator> = new Set([
  'is not',
  'does not contain',
  'set does not contain',
  'set does not contain any',
]);

/** A selected value as the engine compares it; undefined when it counts as missing. */
export function coerceString(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function coerceStringSet(value: unknown): string[] {
  const elements = (list: unknown[]) => list.map(coerceString).filter((s): s is string => s !== undefined);
  if (Array.isArray(value)) return elements(value);
  const text = coerceString(value) ?? '';
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) return elements(parsed);
  } catch {
    // Not JSON: the value is a one-element set.
  }
  return [text];
}

function matchNull(op: EvaluationOperator, filterValues: readonly string[]): boolean {
  const noneListed = filterValues.includes(NONE);
  if (MATCH_WHEN_NONE_LISTED.has(op)) return noneListed;
  if (MATCH_WHEN_NONE_NOT_LISTED.has(op)) return !noneListed;
  return false;
}

/** `is`: exact, except that true/false compare case-insensitively when a filter value is a boolean. */
function matchesIs(value: string, filterValues: readonly string[]): boolean {
  const lower = value.toLowerCase();
  const booleanFilter = filterValues.some((f) => ['true', 'false'].includes(f.toLowerCase()));
  if (booleanFilter && (lower === 'true' || lower === 'false')) {
    return filterValues.some((f) => f.toLowerCase() === lower);
  }
  return filterValues.includes(value);
}

const matchesContains = (value: string, filterValues: readonly string[]): boolean =>
  filterValues.some((f) => value.toLowerCase().includes(f.toLowerCase()));

function matchesSet(values: readonly string[], op: EvaluationOperator, filterValues: readonly string[]): boolean {
  const containsAll = () => values.length >= filterValues.length && filterValues.every((f) => matchesIs(f, values));
  const containsAny = () => filterValues.some((f) => matchesIs(f, values));
  const equal = () => {
    const mine = new Set(values);
    const theirs = new Set(filterValues);
    return mine.size === theirs.size && [...theirs].every((f) => mine.has(f));
  };
  switch (op) {
    case 'set is':
      return equal();
    case 'set is not':
      return !equal();
    case 'set contains':
      return containsAll();
    case 'set does not contain':
      return !containsAll();
    case 'set contains any':
      return containsAny();
    case 'set does not contain any':
      return !containsAny();
    default:
      return false;
  }
}

/** The sign a comparison operator accepts: <0, <=0, >0, >=0. */
function acceptsOrder(op: EvaluationOperator, order: number): boolean {
  if (op.endsWith('less')) return order < 0;
  if (op.endsWith('less or equal')) return order <= 0;
  if (op.endsWith('greater')) return order > 0;
  return order >= 0;
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function parseNumber(text: string): number | undefined {
  const number = Number(text);
  return text.trim() === '' || Number.isNaN(number) ? undefined : number;
}

/**
 * Compares as numbers or versions when the value and at least one filter value parse (only the
 * parsing filter values count); otherwise as strings, as experiment-core's matchesComparable.
 */
function matchesComparable<T>(
  value: string,
  op: EvaluationOperator,
  filterValues: readonly string[],
  parse: (text: string) => T | undefined,
  compare: (a: T, b: T) => number,
): boolean {
  const parsedValue = parse(value);
  const parsedFilters = filterValues.map(parse).filter((f): f is T => f !== undefined);
  if (parsedValue === undefined || parsedFilters.length === 0) {
    return filterValues.some((f) => acceptsOrder(op, compareStrings(value, f)));
  }
  return parsedFilters.some((f) => acceptsOrder(op, compare(parsedValue, f)));
}

/** A pattern that is not a valid regular expression matches nothing (upstream would throw and fail the whole evaluation). */
function compiles(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern);
  } catch {
    return undefined;
  }
}

const matchesRegex = (value: string, filterValues: readonly string[]): boolean =>
  filterValues.some((f) => compiles(f)?.exec(value) != null);

function matchesString(value: string, op: EvaluationOperator, filterValues: readonly string[]): boolean {
  switch (op) {
    case 'is':
      return matchesIs(value, filterValues);
    case 'is not':
      return !matchesIs(value, filterValues);
    case 'contains':
      return matchesContains(value, filterValues);
    case 'does not contain':
      return !matchesContains(value, filterValues);
    case 'less':
    case 'less or equal':
    case 'greater':
    case 'greater or equal':
      return matchesComparable(value, op, filterValues, parseNumber, (a, b) => a - b);
    case 'version less':
    case 'version less or equal':
    case 'version greater':
    case 'version greater or equal':
      return matchesComparable(value, op, filterValues, parseSemanticVersion, compareSemanticVersions);
    case 'regex match':
      return matchesRegex(value, filterValues);
    case 'regex does not match':
      return !matchesRegex(value, filterValues);
    default:
      return false;
  }
}

/** Whether `selected` (the value at the condition's selector) satisfies the condition. */
export function matchCondition(selected: unknown, condition: EvaluationCondition): boolean {
  const value = coerceString(selected);
  if (value === undefined) return matchNull(condition.op, condition.values);
  if (SET_OPERATORS.has(condition.op)) return matchesSet(coerceStringSet(selected), condition.op, condition.values);
  return matchesString(value, condition.op, condition.values);
}
