// forbiddenRequests for operations with path parameters: support/mock-requests.ts looks the
// operation up by the literal request path, which only works for paths without parameters;
// here the answer is checked against the operation found by its path template.
import { describe, expect, test } from 'vitest';
import { type ForbiddenCase, type RawRequest, type ValidCase, send } from './mock-requests.js';
import { expectSpecResponse } from './operation-responses.js';
import { describeProblems, validateRequest } from './request-validator.js';

/** The answer is documented for the operation of the request's path template. */
function expectJsonAnswer(request: RawRequest, answer: { status: number; body: unknown }) {
  // The answers of these operations are JSON (send() parsed the body).
  const headers = new Headers({ 'content-type': 'application/json' });
  expectSpecResponse(request.method, { url: `http://mock${request.url}`, status: answer.status, headers }, answer.body);
}

export function forbiddenTemplatedRequests(cases: ForbiddenCase[]) {
  describe('requests the spec forbids, on paths with parameters', () => {
    for (const c of cases) {
      const { method, url } = c.request;
      const title = c.gap
        ? `prism accepts ${c.name} (known gap) — rejected by the spec validator instead [${method} ${url}]`
        : `prism rejects ${c.name} with ${c.prismStatus} [${method} ${url}]`;
      test(title, async () => {
        const answer = await send(c.role, c.request);
        expect(answer.status, JSON.stringify(answer.body)).toBe(c.prismStatus);
        expectJsonAnswer(c.request, answer);
        const verdict = validateRequest(c.request);
        expect(verdict.valid, `the spec validator accepted ${c.name}`).toBe(false);
        expect(describeProblems(verdict)).toMatch(c.problem);
      });
    }
  });
}

/** Controls on paths with parameters: accepted by Prism (no violations) and by the spec validator. */
export function validTemplatedRequests(cases: ValidCase[]) {
  describe('controls on paths with parameters: valid requests', () => {
    for (const c of cases) {
      test(`prism and the spec validator accept a valid ${c.name} request`, async () => {
        const verdict = validateRequest(c.request);
        expect(verdict.valid, describeProblems(verdict)).toBe(true);
        const answer = await send(c.role, c.request);
        expect(answer.status, JSON.stringify(answer.body)).toBe(c.status);
        expect(answer.violations, 'Prism reported violations').toBeNull();
        expectJsonAnswer(c.request, answer);
      });
    }
  });
}
