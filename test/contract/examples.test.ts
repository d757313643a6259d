// Every example of every bundle validates against its schema (Ajv, OpenAPI 3.0 keywords converted).
import { describe, expect, test } from 'vitest';
import { collectExamples } from './support/examples.js';
import { formatErrors, validatorFor, deref, loadBundles } from '@svc/openapi-validation';

const bundles = loadBundles();

test('there are bundles to check', () => {
  expect(bundles.length).toBeGreaterThan(0);
});

for (const bundle of bundles) {
  describe(`${bundle.name} examples`, () => {
    const validator = validatorFor(bundle.name, bundle.doc);
    const { inline, components } = collectExamples(bundle);

    test('has examples', () => {
      expect(inline.length + components.size).toBeGreaterThan(0);
    });

    for (const example of inline) {
      test(example.location, () => {
        expect(example.schema, 'an example needs a schema to be checked against').toBeDefined();
        const { valid, errors } = validator.validate(example.schema, example.value);
        expect(valid, `${bundle.name} ${example.location}: ${formatErrors(errors)}`).toBe(true);
      });
    }

    for (const [name, { value, uses }] of components) {
      test(`components.examples.${name} (${uses.length} use${uses.length === 1 ? '' : 's'})`, () => {
        expect(uses.length, `components.examples.${name} is not used by any media type or parameter`).toBeGreaterThan(0);
        for (const use of uses) {
          const { valid, errors } = validator.validate(use.schema, value);
          expect(valid, `${bundle.name} components.examples.${name} as ${use.location}: ${formatErrors(errors)}`).toBe(true);
        }
      });
    }

    // The check itself must be able to fail: the first example whose schema has a type is
    // replaced by a value of another type, and the same validation must reject it.
    test('a broken example is rejected (canary)', () => {
      const typed = inline.find((e) => typeof deref<{ type?: string }>(bundle.doc, e.schema)?.type === 'string');
      expect(typed, 'no example with a typed schema to break').toBeDefined();
      const type = deref<{ type: string }>(bundle.doc, typed!.schema).type;
      const wrong = type === 'string' ? 12345 : type === 'object' ? 'not an object' : type === 'array' ? { not: 'an array' } : 'not a number';
      expect(validator.validate(typed!.schema, wrong).valid).toBe(false);
    });
  });
}
