// Checks for tests that drive the typed clients (and their helpers) against the mocks.
import { afterEach, expect } from 'vitest';
import { recordingFetch } from './mock-requests.js';
import { expectSpecResponse } from './operation-responses.js';
import { formatErrors, validatorFor, bundle } from '@svc/openapi-validation';

/** The body of a recorded answer as the spec's schemas describe it: JSON parsed, anything else as text. */
async function answerBody(response: Response): Promise<unknown> {
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) return JSON.parse(await response.text());
  // Text, and binary bodies (an archive, a gzip file), which the specs describe as strings.
  return response.text();
}

/**
 * A fetch for the typed clients whose every request Prism must accept: after each test of the
 * calling `describe` block, each answer is asserted to be 2xx without `sl-violations`, and
 * documented by the spec (status, required headers, body against its schema).
 */
export function acceptedByPrism(): typeof fetch {
  const recorder = recordingFetch();
  afterEach(async () => {
    for (const { url, method, status, violations, response } of recorder.seen) {
      expect(violations, `Prism found violations in the request to ${url}`).toBeNull();
      expect(status, `Prism answered ${status} to ${url}`).toBeLessThan(300);
      expectSpecResponse(method, response, await answerBody(response));
    }
    recorder.seen.length = 0;
  });
  return recorder.fetch;
}

/** Asserts that `value` satisfies `schema` (an OpenAPI schema, or a `$ref` into the bundle `bundleName`). */
export function expectValid(bundleName: string, schema: unknown, value: unknown) {
  expect(schema, 'no schema to validate against').toBeDefined();
  const { valid, errors } = validatorFor(bundleName, bundle(bundleName).doc).validate(schema, value);
  expect(valid, formatErrors(errors)).toBe(true);
}
