import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { compileFlag } from '../src/authoring.js';
import { bucketValues, evaluateFlags, FlagDependencyCycleError, sortByDependencies } from '../src/engine.js';
import type { EvaluationContext, EvaluationFlag, EvaluationVariants } from '../src/format.js';

const example = (name: string): unknown =>
  parse(readFileSync(new URL(`../../../specs/experiment/examples/${name}.yaml`, import.meta.url), 'utf8')).value;

const user = (fields: EvaluationContext['user']): EvaluationContext => ({ user: fields });

// Hand-derived golden results. The hashes come from murmur3X86_32 (checked against published
// vectors in murmur3.test.ts); the variants follow from the ranges below by the engine rules:
//   checkout/user-1 = 840719819:  allocation 19, distribution  8407198
//   checkout/user-2 = 384639936:  allocation 36, distribution  3846399
//   checkout/user-3 = 3214429112: allocation 12, distribution 32144291
const checkout: EvaluationFlag = {
  key: 'checkout',
  metadata: { flagType: 'experiment', flagVersion: 4 },
  variants: {
    off: { key: 'off', metadata: { default: true } },
    control: { key: 'control', value: 'control' },
    treatment: { key: 'treatment', value: 'treatment', payload: { steps: 2 } },
  },
  segments: [
    {
      metadata: { segmentName: 'Staff' },
      conditions: [[{ selector: ['context', 'user', 'user_properties', 'staff'], op: 'is', values: ['true'] }]],
      variant: 'treatment',
    },
    {
      metadata: { segmentName: 'All Other Users' },
      bucket: {
        selector: ['context', 'user', 'user_id'],
        salt: 'checkout',
        allocations: [
          {
            range: [0, 30],
            distributions: [
              { variant: 'control', range: [0, 21474837] },
              { variant: 'treatment', range: [21474837, 42949673] },
            ],
          },
        ],
      },
      variant: 'off',
    },
  ],
};

describe('bucketing', () => {
  it('splits the hash of "<salt>/<value>" into allocation (hash % 100) and distribution (hash / 100)', () => {
    expect(bucketValues('checkout', 'user-1')).toEqual({ allocation: 19, distribution: 8407198 });
    expect(bucketValues('checkout', 'user-2')).toEqual({ allocation: 36, distribution: 3846399 });
    expect(bucketValues('checkout', 'user-3')).toEqual({ allocation: 12, distribution: 32144291 });
  });
});

describe('evaluateFlags golden results', () => {
  it('user-1: allocated (19 < 30), distribution 8407198 < 21474837 → control', () => {
    expect(evaluateFlags(user({ user_id: 'user-1' }), [checkout])).toEqual({
      checkout: {
        key: 'control',
        value: 'control',
        metadata: { flagType: 'experiment', flagVersion: 4, segmentName: 'All Other Users' },
      },
    });
  });

  it('user-2: not allocated (36 ≥ 30) → the segment variant off, flagged default', () => {
    expect(evaluateFlags(user({ user_id: 'user-2' }), [checkout]).checkout).toEqual({
      key: 'off',
      metadata: { flagType: 'experiment', flagVersion: 4, segmentName: 'All Other Users', default: true },
    });
  });

  it('user-3: allocated (12 < 30), distribution 32144291 ≥ 21474837 → treatment with its payload', () => {
    expect(evaluateFlags(user({ user_id: 'user-3' }), [checkout]).checkout).toMatchObject({
      key: 'treatment',
      payload: { steps: 2 },
    });
  });

  it('the first matching segment wins: staff get treatment whatever their bucket', () => {
    const result = evaluateFlags(user({ user_id: 'user-2', user_properties: { staff: true } }), [checkout]);
    expect(result.checkout).toMatchObject({ key: 'treatment', metadata: { segmentName: 'Staff' } });
  });

  it('no bucketing value → the segment variant', () => {
    expect(evaluateFlags(user({ device_id: 'd' }), [checkout]).checkout?.key).toBe('off');
  });

  it('the spec example flag gives the spec example result (d-alice: distribution 25429506 → treatment)', () => {
    const flags = example('SdkFlags') as EvaluationFlag[];
    const expected = example('SdkVariants') as EvaluationVariants;
    const context = user({ device_id: 'd-alice', version: '2.5.0', user_properties: { plan: 'pro' } });
    expect(evaluateFlags(context, flags)['checkout-redesign']).toEqual(expected['checkout-redesign']);
    // d-carol: distribution 17924917 < 21474837 → control; outside the audience → the fallback segment.
    expect(evaluateFlags({ ...context, user: { ...context.user, device_id: 'd-carol' } }, flags)['checkout-redesign']?.key).toBe('control');
    expect(evaluateFlags(user({ device_id: 'd-alice', version: '2.3.9', user_properties: { plan: 'pro' } }), flags)['checkout-redesign']).toMatchObject({
      key: 'off',
      metadata: { default: true, segmentName: 'All Other Users' },
    });
  });

  it('a flag that no segment decides has no result', () => {
    const flag: EvaluationFlag = {
      key: 'targeted',
      variants: { on: { key: 'on' } },
      segments: [{ conditions: [[{ selector: ['context', 'user', 'country'], op: 'is', values: ['France'] }]], variant: 'on' }],
    };
    expect(evaluateFlags(user({ country: 'Spain' }), [flag])).toEqual({});
    expect(evaluateFlags(user({ country: 'France' }), [flag])).toEqual({ targeted: { key: 'on', metadata: {} } });
  });

  it('conditions are an OR of AND lists', () => {
    const is = (field: string, value: string) => ({ selector: ['context', 'user', field], op: 'is' as const, values: [value] });
    const flag: EvaluationFlag = {
      key: 'or-of-ands',
      variants: { on: { key: 'on' } },
      segments: [{ conditions: [[is('country', 'France'), is('platform', 'iOS')], [is('language', 'Basque')]], variant: 'on' }],
    };
    const on = (fields: EvaluationContext['user']) => 'or-of-ands' in evaluateFlags(user(fields), [flag]);
    expect(on({ country: 'France', platform: 'iOS' })).toBe(true);
    expect(on({ country: 'France', platform: 'Android' })).toBe(false);
    expect(on({ language: 'Basque' })).toBe(true);
  });
});

describe('dependencies', () => {
  const parent: EvaluationFlag = {
    key: 'parent',
    variants: { on: { key: 'on' } },
    segments: [{ conditions: [[{ selector: ['context', 'user', 'country'], op: 'is', values: ['France'] }]], variant: 'on' }],
  };
  const child: EvaluationFlag = {
    key: 'child',
    dependencies: ['parent'],
    variants: { on: { key: 'on' } },
    segments: [{ conditions: [[{ selector: ['result', 'parent', 'key'], op: 'is', values: ['on'] }]], variant: 'on' }],
  };

  it('evaluates a flag after the flags it depends on and selects their results', () => {
    expect(Object.keys(evaluateFlags(user({ country: 'France' }), [child, parent])).sort()).toEqual(['child', 'parent']);
    expect(evaluateFlags(user({ country: 'Spain' }), [child, parent])).toEqual({});
  });

  it('reports only the requested flags, evaluating their dependencies anyway', () => {
    expect(Object.keys(evaluateFlags(user({ country: 'France' }), [child, parent], ['child']))).toEqual(['child']);
  });

  it('sorts dependencies first and refuses cycles', () => {
    expect(sortByDependencies([child, parent]).map((flag) => flag.key)).toEqual(['parent', 'child']);
    const cyclic = { ...parent, dependencies: ['child'] };
    expect(() => sortByDependencies([child, cyclic])).toThrow(FlagDependencyCycleError);
  });
});

describe('assignment', () => {
  const flag = compileFlag({
    key: 'rollout-30',
    variants: { a: { weight: 1 }, b: { weight: 2 }, c: { weight: 1 } },
    rollout: 30,
  });

  it('is deterministic for a user and independent of other users', () => {
    const alone = evaluateFlags(user({ device_id: 'device-42' }), [flag]);
    for (let i = 0; i < 5; i++) expect(evaluateFlags(user({ device_id: 'device-42' }), [flag])).toEqual(alone);
  });

  it('matches the rollout and the weights within ±1% over 100,000 users', () => {
    const counts: Record<string, number> = {};
    const users = 100_000;
    for (let i = 0; i < users; i++) {
      const key = evaluateFlags(user({ device_id: `device-${i}` }), [flag])['rollout-30']!.key!;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    const expected = { off: 70, a: 7.5, b: 15, c: 7.5 };
    for (const [variant, percent] of Object.entries(expected)) {
      expect(Math.abs(((counts[variant] ?? 0) / users) * 100 - percent)).toBeLessThanOrEqual(1);
    }
  });
});
