import { describe, expect, it } from 'vitest';
import { AuthoringError, compileFlag, compileFlags, DISTRIBUTION_SLOTS, servedBy } from '../src/authoring.js';
import { evaluateFlags } from '../src/engine.js';

describe('compileFlag', () => {
  it('compiles variants, weights, rollout and a rule into the evaluation format', () => {
    const flag = compileFlag({
      key: 'new-checkout',
      type: 'experiment',
      experimentKey: 'exp-1',
      version: 3,
      variants: { control: { weight: 1 }, treatment: { weight: 1, payload: { steps: 2 } } },
      rollout: 25,
      rules: [
        { name: 'Staff', when: [{ property: 'user_properties.staff', op: 'is', values: [true] }], variant: 'treatment' },
      ],
    });
    expect(flag).toEqual({
      key: 'new-checkout',
      metadata: { deployed: true, evaluationMode: 'remote', flagType: 'experiment', flagVersion: 3, experimentKey: 'exp-1' },
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
            selector: ['context', 'user', 'device_id'],
            salt: 'new-checkout',
            allocations: [
              {
                range: [0, 25],
                distributions: [
                  { variant: 'control', range: [0, 21474837] },
                  { variant: 'treatment', range: [21474837, DISTRIBUTION_SLOTS] },
                ],
              },
            ],
          },
          variant: 'off',
        },
      ],
    });
  });

  it('defaults: equal weights, 100% rollout, device_id bucketing salted with the key, release type', () => {
    const flag = compileFlag({ key: 'banner', variants: { a: {}, b: {}, c: {} } });
    expect(flag.metadata).toMatchObject({ flagType: 'release', flagVersion: 1 });
    const bucket = flag.segments[0]!.bucket!;
    expect(bucket.selector).toEqual(['context', 'user', 'device_id']);
    expect(bucket.salt).toBe('banner');
    expect(bucket.allocations).toEqual([
      {
        range: [0, 100],
        distributions: [
          { variant: 'a', range: [0, 14316558] },
          { variant: 'b', range: [14316558, 28633115] },
          { variant: 'c', range: [28633115, 42949673] },
        ],
      },
    ]);
  });

  it('a rule may split its users with its own rollout and weights, bucketing by user_id', () => {
    const flag = compileFlag({
      key: 'pricing',
      bucketBy: 'user_id',
      salt: 'pricing-v2',
      variants: { cheap: {}, dear: {} },
      rollout: 0,
      rules: [{ when: [{ property: 'country', op: 'is', values: ['France'] }], rollout: 50, weights: { dear: 1 } }],
    });
    expect(flag.segments[0]).toEqual({
      metadata: { segmentName: 'Rule 1' },
      conditions: [[{ selector: ['context', 'user', 'country'], op: 'is', values: ['France'] }]],
      bucket: {
        selector: ['context', 'user', 'user_id'],
        salt: 'pricing-v2',
        allocations: [{ range: [0, 50], distributions: [{ variant: 'dear', range: [0, DISTRIBUTION_SLOTS] }] }],
      },
      variant: 'off',
    });
    expect(flag.segments[1]!.bucket!.allocations[0]!.range).toEqual([0, 0]);
  });

  it('a condition on another flag becomes a dependency selecting its result', () => {
    const flags = compileFlags([
      { key: 'parent', variants: { on: {} } },
      { key: 'child', variants: { on: {} }, rules: [{ when: [{ property: 'flags.parent', op: 'is', values: ['on'] }], variant: 'on' }], rollout: 0 },
    ]);
    expect(flags[1]!.dependencies).toEqual(['parent']);
    expect(flags[1]!.segments[0]!.conditions).toEqual([[{ selector: ['result', 'parent', 'key'], op: 'is', values: ['on'] }]]);
    expect(evaluateFlags({ user: { device_id: 'd1' } }, flags).child?.key).toBe('on');
  });

  it('groups are selected from the context', () => {
    const flag = compileFlag({
      key: 'org-beta',
      variants: { on: {} },
      rules: [{ when: [{ property: 'groups.org.group_name', op: 'is', values: ['acme'] }], variant: 'on' }],
      rollout: 0,
    });
    expect(evaluateFlags({ user: {}, groups: { org: { group_name: 'acme' } } }, [flag])['org-beta']?.key).toBe('on');
    expect(evaluateFlags({ user: { device_id: 'd' } }, [flag])['org-beta']?.key).toBe('off');
  });

  it('an authored off variant keeps its payload and stays the default', () => {
    const flag = compileFlag({ key: 'k', variants: { off: { payload: 'legacy' }, on: {} } });
    expect(flag.variants.off).toEqual({ key: 'off', payload: 'legacy', metadata: { default: true } });
    expect(flag.segments[0]!.bucket!.allocations[0]!.distributions.map((d) => d.variant)).toEqual(['on']);
  });

  it('zero-weight variants get no range', () => {
    const flag = compileFlag({ key: 'k', variants: { a: { weight: 0 }, b: { weight: 3 } } });
    expect(flag.segments[0]!.bucket!.allocations[0]!.distributions).toEqual([{ variant: 'b', range: [0, DISTRIBUTION_SLOTS] }]);
  });

  it.each([
    [{ key: '', variants: { on: {} } }, /key is required/],
    [{ key: 'k', variants: {} }, /k\.variants: needs at least one variant/],
    [{ key: 'k', variants: { on: {} }, rollout: 12.5 }, /k\.rollout: must be an integer percentage/],
    [{ key: 'k', variants: { on: {} }, rollout: 101 }, /k\.rollout/],
    [{ key: 'k', variants: { on: { weight: -1 } } }, /k\.weights: weights must be non-negative/],
    [{ key: 'k', variants: { on: { weight: 0 } } }, /positive sum/],
    [{ key: 'k', variants: { on: {} }, rules: [{ when: [], variant: 'nope' }] }, /k\.rules\[0\]\.variant: unknown variant "nope"/],
    [{ key: 'k', variants: { on: {} }, rules: [{ when: [], weights: { nope: 1 } }] }, /unknown variant "nope"/],
    [{ key: 'k', variants: { on: {} }, rules: [{ when: [{ property: 'flags.k', op: 'is', values: ['on'] }], variant: 'on' }] }, /cannot depend on itself/],
    [{ key: 'k', variants: { on: {} }, rules: [{ when: [{ property: 'email', op: 'regex match', values: ['@x\\.com$', '(('] }], variant: 'on' }] }, /k\.rules\[0\]\.when\[0\]\.values: "\(\(" is not a regular expression/],
  ] as const)('refuses %j', (flag, problem) => {
    expect(() => compileFlag(flag)).toThrow(AuthoringError);
    expect(() => compileFlag(flag)).toThrow(problem);
  });

  it('refuses duplicate keys in a file', () => {
    expect(() => compileFlags([{ key: 'k', variants: { on: {} } }, { key: 'k', variants: { on: {} } }])).toThrow(/duplicate flag key/);
  });

  it('deployments: a flag names the deployments that serve it; its dependencies must be served there too', () => {
    const base = { key: 'base', variants: { on: {} }, deployments: ['web', 'ios'] };
    const dependent = (deployments?: string[]) => ({ key: 'dependent', variants: { on: {} }, deployments, rules: [{ when: [{ property: 'flags.base', op: 'is' as const, values: ['on'] }], variant: 'on' }] });
    expect(compileFlags([base, dependent(['web'])]).map((f) => f.key)).toEqual(['base', 'dependent']);
    expect(() => compileFlags([base, dependent(['web', 'android'])])).toThrow(/dependent\.deployments: depends on "base", which android does not serve/);
    expect(() => compileFlags([base, dependent()])).toThrow(/which not every deployment serves/);
    expect(() => compileFlags([{ key: 'k', variants: { on: {} }, deployments: 'web' as never }])).toThrow(/k\.deployments: must be a list/);
    expect(servedBy(base, 'ios')).toBe(true);
    expect(servedBy(base, 'android')).toBe(false);
    expect(servedBy({}, 'android')).toBe(true);
  });
});
