// Checks of what the typed clients (and their helpers) receive from the mocks against the
// spec: the documented response of an operation named by its path template, or a schema.
import { expect } from 'vitest';
import { formatErrors, validatorFor } from './schema.js';
import { type Doc, bundle, deref, findOperation } from './specs.js';

/** Asserts that `body` is what the spec documents for `method pathTemplate` and `status`. */
export function expectDocumentedBody(method: string, pathTemplate: string, status: number, body: unknown) {
  const { bundle: owner, op } = findOperation(method, pathTemplate);
  const response = deref<Doc>(owner.doc, op.responses[String(status)]);
  expect(response, `${method} ${pathTemplate} documents no ${status} response`).toBeDefined();
  expectValid(owner.name, response.content?.['application/json']?.schema, body);
}

/** Asserts that `value` satisfies `schema` (an OpenAPI schema or `$ref` of the bundle `bundleName`). */
export function expectValid(bundleName: string, schema: unknown, value: unknown) {
  expect(schema, 'no schema to validate against').toBeDefined();
  const { valid, errors } = validatorFor(bundleName, bundle(bundleName).doc).validate(schema, value);
  expect(valid, formatErrors(errors)).toBe(true);
}
