import { describe, expect, it } from 'vitest';
import { matchCondition } from '../src/conditions.js';
import type { EvaluationOperator } from '../src/format.js';

const matches = (value: unknown, op: EvaluationOperator, ...values: string[]) =>
  matchCondition(value, { selector: ['context', 'user', 'x'], op, values });

describe('matchCondition', () => {
  it('is / is not compare exact strings, numbers as their text', () => {
    expect(matches('pro', 'is', 'free', 'pro')).toBe(true);
    expect(matches('Pro', 'is', 'pro')).toBe(false);
    expect(matches(42, 'is', '42')).toBe(true);
    expect(matches('pro', 'is not', 'free')).toBe(true);
    expect(matches('pro', 'is not', 'pro')).toBe(false);
  });

  it('is compares booleans case-insensitively when a filter value is a boolean', () => {
    expect(matches(true, 'is', 'true')).toBe(true);
    expect(matches('TRUE', 'is', 'true')).toBe(true);
    expect(matches(false, 'is', 'True', 'false')).toBe(true);
    expect(matches(false, 'is', 'true')).toBe(false);
    expect(matches('TRUE', 'is', 'TRUE-ish')).toBe(false);
  });

  it('contains / does not contain ignore case', () => {
    expect(matches('alice@Example.com', 'contains', 'example.COM')).toBe(true);
    expect(matches('alice@example.com', 'does not contain', 'test')).toBe(true);
    expect(matches('alice@example.com', 'does not contain', 'ALICE')).toBe(false);
  });

  it('objects and arrays are compared as their JSON', () => {
    expect(matches({ a: 1 }, 'is', '{"a":1}')).toBe(true);
    expect(matches(['x', 'y'], 'contains', '"y"')).toBe(true);
  });

  it('numeric comparisons coerce both sides to numbers', () => {
    expect(matches('10', 'greater', '9')).toBe(true); // as strings "10" < "9"
    expect(matches(10, 'less or equal', '10')).toBe(true);
    expect(matches('2.5', 'less', '3', 'not a number')).toBe(true);
    expect(matches(3, 'greater or equal', '4')).toBe(false);
    expect(matches('-1e3', 'less', '0')).toBe(true);
  });

  it('numeric comparisons fall back to string order when a side is not a number', () => {
    expect(matches('beta', 'greater', 'alpha')).toBe(true);
    expect(matches('beta', 'less', '5')).toBe(false); // "beta" > "5" as strings
    expect(matches('10', 'less', 'abc')).toBe(true); // no filter value parses: "10" < "abc"
  });

  it('version comparisons follow semantic versions, a missing patch being 0', () => {
    expect(matches('2.10.0', 'version greater', '2.9.1')).toBe(true); // as strings "2.10.0" < "2.9.1"
    expect(matches('2.4', 'version greater or equal', '2.4.0')).toBe(true);
    expect(matches('2.4.0-beta.1', 'version less', '2.4.0')).toBe(true);
    expect(matches('2.4.0-beta.2', 'version greater', '2.4.0-beta.1')).toBe(true);
    expect(matches('3.0.0', 'version less or equal', '2.99.99')).toBe(false);
  });

  it('version comparisons fall back to string order for what does not parse', () => {
    expect(matches('v2', 'version less', 'v3')).toBe(true);
    expect(matches('1.2.3.4', 'version greater', '1.2.3')).toBe(true); // "1.2.3.4" > "1.2.3" as strings
  });

  it('regex operators search the value', () => {
    expect(matches('alice@example.com', 'regex match', '@example\\.com$')).toBe(true);
    expect(matches('alice@example.com', 'regex match', '^bob')).toBe(false);
    expect(matches('alice@example.com', 'regex does not match', '^bob')).toBe(true);
  });

  it('a filter value that is not a regular expression matches nothing instead of failing the evaluation', () => {
    expect(matches('a(b', 'regex match', 'a(', 'b$')).toBe(true);
    expect(matches('a(b', 'regex match', 'a(')).toBe(false);
    expect(matches('a(b', 'regex does not match', 'a(')).toBe(true);
  });

  it('set operators read arrays, JSON array strings and scalars as string sets', () => {
    expect(matches(['a', 'b'], 'set is', 'b', 'a')).toBe(true);
    expect(matches(['a', 'b', 'a'], 'set is', 'a', 'b')).toBe(true);
    expect(matches('["a","b"]', 'set is', 'a', 'b')).toBe(true);
    expect(matches(['a', 'b'], 'set is not', 'a')).toBe(true);
    expect(matches(['a', 'b', 'c'], 'set contains', 'a', 'c')).toBe(true);
    expect(matches(['a'], 'set contains', 'a', 'c')).toBe(false);
    expect(matches(['a', 'b'], 'set does not contain', 'a', 'z')).toBe(true);
    expect(matches([1, 2], 'set contains any', '2', '3')).toBe(true);
    expect(matches('a', 'set contains any', 'a')).toBe(true);
    expect(matches(['a'], 'set does not contain any', 'b', 'c')).toBe(true);
    expect(matches([true], 'set contains', 'TRUE')).toBe(true);
  });

  it('a missing value matches only through "(none)", or the negative operators without it', () => {
    for (const missing of [undefined, null, '']) {
      expect(matches(missing, 'is', '(none)')).toBe(true);
      expect(matches(missing, 'is', 'pro')).toBe(false);
      expect(matches(missing, 'is not', 'pro')).toBe(true);
      expect(matches(missing, 'is not', '(none)')).toBe(false);
      expect(matches(missing, 'greater', '(none)')).toBe(true);
      expect(matches(missing, 'set contains any', 'a')).toBe(false);
      expect(matches(missing, 'set does not contain any', 'a')).toBe(true);
      expect(matches(missing, 'regex match', '.*')).toBe(false);
      expect(matches(missing, 'regex does not match', 'x')).toBe(false);
    }
  });

  it('0 and false are values, not missing', () => {
    expect(matches(0, 'is', '0')).toBe(true);
    expect(matches(false, 'is', 'false')).toBe(true);
    expect(matches(false, 'is', '(none)')).toBe(false);
  });
});
