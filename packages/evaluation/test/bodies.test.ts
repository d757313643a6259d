import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { compileFlags } from '../src/authoring.js';
import { evaluateFlags } from '../src/engine.js';
import {
  contextFromUser,
  EvaluationRequestError,
  flagKeysFromSdkHeader,
  parseFlagKeysQuery,
  userFromSdkHeader,
  userFromVardataQuery,
} from '../src/requests.js';
import { flagsBody, sdkFlagsBody, sdkVardataBody, vardataBody } from '../src/responses.js';

const bundle = JSON.parse(readFileSync(new URL('../../../specs/dist/experiment.json', import.meta.url), 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addSchema(bundle, 'experiment');
/** Asserts that `body` is valid against the spec schema, e.g. `#/components/schemas/Variants`. */
function expectValid(pointer: string, body: unknown) {
  const validate = ajv.getSchema(`experiment${pointer}`)!;
  expect(validate(body), ajv.errorsText(validate.errors)).toBe(true);
}
const arrayOf = (name: string) => ({ type: 'array', items: { $ref: `experiment#/components/schemas/${name}` } });

const base64url = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');

const flags = compileFlags([
  {
    key: 'checkout-redesign',
    type: 'experiment',
    experimentKey: 'exp-1',
    variants: { control: {}, treatment: { payload: { button_color: '#1f6feb' } } },
    rules: [{ name: 'Beta', when: [{ property: 'user_properties.beta', op: 'is', values: [true] }], variant: 'treatment' }],
    rollout: 0,
  },
  { key: 'dark-mode', variants: { on: { payload: true } } },
]);

describe('requests', () => {
  it('reads the user of /v1/vardata from context, user_id and device_id taking precedence', () => {
    expect(
      userFromVardataQuery({ user_id: 'alice', context: JSON.stringify({ user_id: 'bob', user_properties: { plan: 'pro' } }) }),
    ).toEqual({ user_id: 'alice', user_properties: { plan: 'pro' } });
    expect(userFromVardataQuery({ device_id: 'd1' })).toEqual({ device_id: 'd1' });
    expect(() => userFromVardataQuery({ context: '{"user_id":' })).toThrow(/^context is not valid JSON: /);
    expect(() => userFromVardataQuery({ context: '[1]' })).toThrow(EvaluationRequestError);
  });

  it('reads flag keys from the comma-separated query; empty means all', () => {
    expect(parseFlagKeysQuery('a, b,,c')).toEqual(['a', 'b', 'c']);
    expect(parseFlagKeysQuery('')).toBeUndefined();
    expect(parseFlagKeysQuery(undefined)).toBeUndefined();
  });

  it('decodes the official SDKs’ base64url JSON headers, UTF-8 included', () => {
    const user = { user_id: 'zoë@example.com', user_properties: { city: 'Zürich' } };
    expect(userFromSdkHeader(base64url(user))).toEqual(user);
    expect(flagKeysFromSdkHeader(base64url(['a', 'b']))).toEqual(['a', 'b']);
    expect(flagKeysFromSdkHeader(undefined)).toBeUndefined();
    expect(flagKeysFromSdkHeader(base64url([]))).toBeUndefined();
  });

  it.each([
    [undefined, 'X-Amp-Exp-User is missing'],
    ['%%%', 'X-Amp-Exp-User is not base64url-encoded JSON'],
    [Buffer.from('not json').toString('base64url'), 'X-Amp-Exp-User is not base64url-encoded JSON'],
    [base64url(['alice']), 'X-Amp-Exp-User is not the base64url encoding of a JSON object'],
  ])('refuses the user header %j', (header, message) => {
    expect(() => userFromSdkHeader(header)).toThrow(new EvaluationRequestError(message));
  });

  it('refuses flag keys that are not an array of strings', () => {
    expect(() => flagKeysFromSdkHeader(base64url(['a', 1]))).toThrow(EvaluationRequestError);
    expect(() => flagKeysFromSdkHeader(base64url({ a: 1 }))).toThrow(EvaluationRequestError);
  });

  it('builds the evaluation context as the SDKs do: user, and the first group name per type', () => {
    expect(
      contextFromUser({
        user_id: 'alice',
        groups: { org: ['acme', 'other'], team: [] },
        group_properties: { org: { acme: { tier: 'gold' } } },
      }),
    ).toEqual({ user: { user_id: 'alice' }, groups: { org: { group_name: 'acme', group_properties: { tier: 'gold' } } } });
    expect(contextFromUser({ user_id: 'alice' })).toEqual({ user: { user_id: 'alice' } });
  });
});

describe('response bodies', () => {
  const beta = evaluateFlags(contextFromUser({ device_id: 'd1', user_properties: { beta: true } }), flags);
  const other = evaluateFlags(contextFromUser({ device_id: 'd1' }), flags);

  it('/v1/vardata: seed 002 variants; default results are left out', () => {
    expect(vardataBody(beta)).toEqual({
      'checkout-redesign': { key: 'treatment', value: 'treatment', payload: { button_color: '#1f6feb' }, expKey: 'exp-1' },
      'dark-mode': { key: 'on', value: 'on', payload: true },
    });
    expect(vardataBody(other)).toEqual({ 'dark-mode': { key: 'on', value: 'on', payload: true } });
    expect(vardataBody({})).toEqual({});
    expectValid('#/components/schemas/Variants', vardataBody(beta));
  });

  it('/v1/vardata passes an evaluationId set in the result metadata', () => {
    const withId = { f: { key: 'on', metadata: { evaluationId: 'ev-1' } } };
    expect(vardataBody(withId)).toEqual({ f: { key: 'on', evaluationId: 'ev-1' } });
    expect(vardataBody({ ...withId, g: { key: 'on' } }, { evaluationId: 'ev-2' })).toEqual({
      f: { key: 'on', evaluationId: 'ev-1' },
      g: { key: 'on', evaluationId: 'ev-2' },
    });
  });

  it('/sdk/v2/vardata: every result with merged metadata, defaults flagged', () => {
    const body = sdkVardataBody(other);
    expect(body['checkout-redesign']).toEqual({
      key: 'off',
      metadata: {
        default: true,
        segmentName: 'All Other Users',
        deployed: true,
        evaluationMode: 'remote',
        flagType: 'experiment',
        flagVersion: 1,
        experimentKey: 'exp-1',
      },
    });
    expectValid('#/components/schemas/EvaluationVariants', body);
  });

  it('neither vardata body reports mutual exclusion or holdout groups', () => {
    const results = { group: { key: 'slot-1', metadata: { flagType: 'mutual-exclusion-group' } }, f: { key: 'on' } };
    expect(Object.keys(sdkVardataBody(results))).toEqual(['f']);
    expect(Object.keys(vardataBody(results))).toEqual(['f']);
  });

  it('/sdk/v2/flags: the flags in the evaluation format, dependencies first', () => {
    const body = sdkFlagsBody([...flags].reverse());
    expect(body.map((flag) => flag.key)).toEqual(['dark-mode', 'checkout-redesign']);
    expect(body[1]).toEqual(flags[0]);
    expect(body[1]).not.toBe(flags[0]);
    ajv.validate(arrayOf('EvaluationFlag'), body);
    expect(ajv.errors ?? null).toBeNull();
  });

  it('/v1/flags: seed 002 flag configurations with the required metadata', () => {
    const body = flagsBody([{ key: 'bare', variants: { on: { value: 1 } }, segments: [{ variant: 'on' }] }, ...flags]);
    expect(body[0]).toEqual({
      key: 'bare',
      metadata: { deployed: true, evaluationMode: 'remote', flagType: 'release', flagVersion: 1 },
      variants: { on: { key: 'on' } },
      segments: [{ variant: 'on' }],
    });
    ajv.validate(arrayOf('FlagConfiguration'), body);
    expect(ajv.errors ?? null).toBeNull();
  });
});
