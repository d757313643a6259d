// Objects whose keys come from users (property names, device ids, group types): without a
// prototype, so that `__proto__`, `constructor` or `hasOwnProperty` are keys like any other,
// never setters or inherited members.

/** An empty object without prototype. */
export const dataRecord = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/** A copy without prototype (own enumerable keys only). */
export const copyDataRecord = <T>(source: Record<string, T>): Record<string, T> => Object.assign(dataRecord<T>(), source);
