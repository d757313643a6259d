// Checks answers the typed client got from the mock against the spec: the operation is
// found by its path template (so `/api/3/annotations/3081` finds
// `/api/3/annotations/{annotation_id}`), the status must be documented, the body must
// validate against the schema of the answer's media type, documented required headers
// must be present.
import { expect } from 'vitest';
import { formatErrors, validatorFor, type Doc, type OperationRef, deref, matchOperation } from '@svc/openapi-validation';

/** The parts of an answer that are checked (a fetch `Response` has them). */
export interface Answer {
  url: string;
  status: number;
  headers: Headers;
}

/** Asserts that `response` (whose body was read as `body`) is what the spec documents for it. */
export function expectSpecResponse(method: string, response: Answer, body: unknown): OperationRef {
  const { ref } = matchOperation(method, new URL(response.url).pathname);
  const documented = deref<Doc | undefined>(ref.bundle.doc, ref.op.responses[String(response.status)]);
  expect(documented, `${ref.op.operationId} documents no ${response.status} answer`).toBeDefined();
  for (const [name, header] of Object.entries((documented!.headers ?? {}) as Doc)) {
    if (deref<Doc>(ref.bundle.doc, header).required) expect(response.headers.get(name), `header ${name}`).not.toBeNull();
  }
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const content = (documented!.content ?? {}) as Doc;
  if (Object.keys(content).length === 0) return ref;
  expect(Object.keys(content), `${ref.op.operationId} ${response.status} content type`).toContain(mediaType);
  const { valid, errors } = validatorFor(ref.bundle.name, ref.bundle.doc).validate(content[mediaType].schema, body);
  expect(valid, `${ref.op.operationId} ${response.status}: ${formatErrors(errors)}`).toBe(true);
  return ref;
}
