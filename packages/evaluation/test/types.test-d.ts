import { describe, expectTypeOf, it } from 'vitest';
import { compileFlag, evaluateFlags, type EvaluationFlag, type EvaluationOperator, type Variants } from '../src/index.js';

describe('types derived from the spec', () => {
  it('operators are the spec enum', () => {
    expectTypeOf<'set contains any'>().toExtend<EvaluationOperator>();
    expectTypeOf<'equals'>().not.toExtend<EvaluationOperator>();
  });

  it('refuses authored conditions with an unknown operator or a non-scalar value', () => {
    // @ts-expect-error 'equals' is not an operator of the evaluation format
    compileFlag({ key: 'k', variants: { on: {} }, rules: [{ when: [{ property: 'country', op: 'equals', values: ['FR'] }] }] });
    // @ts-expect-error condition values are strings, numbers or booleans
    compileFlag({ key: 'k', variants: { on: {} }, rules: [{ when: [{ property: 'country', op: 'is', values: [{ a: 1 }] }] }] });
    // @ts-expect-error bucketing is by device_id or user_id
    compileFlag({ key: 'k', variants: { on: {} }, bucketBy: 'email' });
  });

  it('refuses flags without segments and results used as flags', () => {
    // @ts-expect-error a flag needs segments
    const incomplete: EvaluationFlag = { key: 'k', variants: {} };
    const results = evaluateFlags({ user: {} }, [incomplete]);
    // @ts-expect-error results are not flags
    evaluateFlags({ user: {} }, [results]);
    expectTypeOf<Variants[string]['key']>().toEqualTypeOf<string>();
  });
});
