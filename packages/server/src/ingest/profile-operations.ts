// `$identify` / `$groupidentify` property operations applied to a stored profile.

type Profile = Record<string, unknown>;

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const existingArray = (value: unknown): unknown[] => (value === undefined || value === null ? [] : asArray(value));

const OPERATIONS: Record<string, (profile: Profile, name: string, operand: unknown) => void> = {
  $set: (profile, name, operand) => {
    profile[name] = operand;
  },
  $setOnce: (profile, name, operand) => {
    if (profile[name] === undefined) profile[name] = operand;
  },
  $add: (profile, name, operand) => {
    const current = typeof profile[name] === 'number' ? (profile[name] as number) : 0;
    profile[name] = current + Number(operand);
  },
  $append: (profile, name, operand) => {
    profile[name] = [...existingArray(profile[name]), ...asArray(operand)];
  },
  $prepend: (profile, name, operand) => {
    profile[name] = [...asArray(operand), ...existingArray(profile[name])];
  },
  $unset: (profile, name) => {
    delete profile[name];
  },
};

/**
 * Applies the operations in the order they are written; a key that is not an operation is
 * a plain `$set` of that property. Returns a new profile.
 */
export function applyPropertyOperations(profile: Profile, operations: Record<string, unknown>): Profile {
  const next = { ...profile };
  for (const [key, value] of Object.entries(operations)) {
    const operation = OPERATIONS[key];
    if (!operation) {
      next[key] = value;
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    for (const [name, operand] of Object.entries(value)) operation(next, name, operand);
  }
  return next;
}
