// `$identify` / `$groupidentify` property operations applied to a stored profile. Property
// names are data: operations are found in a Map and profiles have no prototype.
import { copyDataRecord } from '../shared/data-record.js';

type Profile = Record<string, unknown>;
type Operation = (profile: Profile, name: string, operand: unknown) => void;

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const existingArray = (value: unknown): unknown[] => (value === undefined || value === null ? [] : asArray(value));

const OPERATIONS = new Map<string, Operation>([
  ['$set', (profile, name, operand) => void (profile[name] = operand)],
  ['$setOnce', (profile, name, operand) => void (profile[name] === undefined && (profile[name] = operand))],
  [
    '$add',
    (profile, name, operand) => {
      const current = typeof profile[name] === 'number' ? (profile[name] as number) : 0;
      profile[name] = current + Number(operand);
    },
  ],
  ['$append', (profile, name, operand) => void (profile[name] = [...existingArray(profile[name]), ...asArray(operand)])],
  ['$prepend', (profile, name, operand) => void (profile[name] = [...asArray(operand), ...existingArray(profile[name])])],
  ['$unset', (profile, name) => void delete profile[name]],
]);

/** Removes every property, whatever its operand (by convention `"-"`). */
const CLEAR_ALL = '$clearAll';

/** Whether a key of `$identify` user properties is an operation rather than a plain property. */
export const isPropertyOperation = (key: string): boolean => key === CLEAR_ALL || OPERATIONS.has(key);

/**
 * Applies the operations in the order they are written; a key that is not an operation is
 * a plain `$set` of that property. Returns a new profile (without prototype).
 */
export function applyPropertyOperations(profile: Profile, operations: Record<string, unknown>): Profile {
  const next = copyDataRecord(profile);
  for (const [key, value] of Object.entries(operations)) {
    if (key === CLEAR_ALL) {
      for (const name of Object.keys(next)) delete next[name];
      continue;
    }
    const operation = OPERATIONS.get(key);
    if (!operation) {
      next[key] = value;
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    for (const [name, operand] of Object.entries(value)) operation(next, name, operand);
  }
  return next;
}
