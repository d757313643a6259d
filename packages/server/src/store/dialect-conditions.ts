// A filter condition (model/query.ts) as SQL, written once for every dialect: what each
// operator means is the same on every engine; only the primitives below differ.
import { type Condition, NONE, type PropertyRef } from '../model/query.js';

/** What a dialect supplies to compile conditions. */
export interface ConditionPrimitives {
  /** The text of a property's value at event time, NULL when missing. */
  text(property: PropertyRef): string;
  /** A string literal. */
  string(value: string): string;
  /** The number a text is (a double), NULL when it is not a number. */
  number(text: string): string;
  /** A finite number as a literal. */
  numeral(value: number): string;
  /** A condition that may be NULL, false when it is. */
  orFalse(condition: string): string;
  /** Whether a text holds one of the values, NULL when the text is. */
  containsAny(text: string, values: string[]): string;
  /**
   * Whether the property's elements (an array's, else its value's `text`), without repeats and
   * NULLs, are the values' set; never NULL. `scope`: the rows the condition is asked of.
   */
  setIs(property: PropertyRef, text: string, values: string[], scope: string): string;
}

/** `scope`: a condition on the rows the condition is asked of (the selector's event type), for dialects that check values. */
export function conditionSql(dialect: ConditionPrimitives, { property, op, values }: Condition, scope: string): string {
  const value = dialect.text(property);
  // `(none)` matches a missing value.
  const is = `(${value} IN (${values.map(dialect.string).join(', ')})${values.includes(NONE) ? ` OR ${value} IS NULL` : ''})`;
  // A comparison with something that is not a number matches nothing.
  const first = Number.isFinite(Number(values[0])) ? dialect.numeral(Number(values[0])) : 'NULL';
  const compare = (operator: string) => dialect.orFalse(`${dialect.number(value)} ${operator} ${first}`);
  switch (op) {
    case 'is':
      return is;
    case 'is not':
      return `NOT ${dialect.orFalse(is)}`;
    case 'contains':
      return dialect.orFalse(dialect.containsAny(value, values));
    case 'does not contain':
      return `NOT ${dialect.orFalse(dialect.containsAny(value, values))}`;
    case 'less':
      return compare('<');
    case 'less or equal':
      return compare('<=');
    case 'greater':
      return compare('>');
    case 'greater or equal':
      return compare('>=');
    case 'set is':
      return dialect.setIs(property, value, values, scope);
    case 'set is not':
      return `NOT ${dialect.setIs(property, value, values, scope)}`;
  }
}
