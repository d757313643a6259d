// Requests sent with raw fetch to the Prism mocks, and the two kinds of checks every
// negative test file runs: requests the spec forbids, and their valid controls.
import { describe, expect, inject, test } from 'vitest';
import {
  type OperationRef,
  type RawRequest,
  deref,
  describeProblems,
  findOperation,
  formatErrors,
  matchOperation,
  validateRequest,
  validatorFor,
} from '@svc/openapi-validation';

export type { RawRequest };

export const API_KEY = '6f1c2b9e4d7a4c3b8e2f0a1d5c9b7e34';
export const BASIC = `Basic ${Buffer.from(`${API_KEY}:secret-key-0123`).toString('base64')}`;
export const DEPLOYMENT = 'Api-Key server-deployment-key-0123';

export const json = (url: string, body: unknown, headers: Record<string, string> = {}): RawRequest => ({
  method: 'POST',
  url,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
export const form = (url: string, fields: Record<string, string>): RawRequest => ({
  method: 'POST',
  url,
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});
export const get = (url: string, headers: Record<string, string> = {}): RawRequest => ({ method: 'GET', url, headers });
export const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

export async function send(role: string, request: RawRequest) {
  const base = inject('mockUrls')[role];
  if (!base) throw new Error(`no mock for host role ${role}`);
  const response = await fetch(base + request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: response.status, body, violations: response.headers.get('sl-violations') };
}

/** Asserts that `body` is what the spec documents for this operation and status. */
export function expectDocumentedResponse(request: RawRequest, status: number, body: unknown) {
  expectDocumented(matchOperation(request.method, new URL(request.url, 'http://x').pathname).ref, status, body);
}

/** Same, for an operation named by method and path template (`/api/2/x/{id}`). */
export function expectDocumentedBody(method: string, path: string, status: number, body: unknown) {
  expectDocumented(findOperation(method, path), status, body);
}

function expectDocumented({ bundle, op, method, path }: OperationRef, status: number, body: unknown) {
  const response = deref<Record<string, any>>(bundle.doc, op.responses[String(status)]);
  expect(response, `${method.toUpperCase()} ${path} documents no ${status} response`).toBeDefined();
  // A JSON answer's schema, else that of the one media type documented (a binary body is a string to it).
  const schema = response.content?.['application/json']?.schema ?? (Object.values(response.content ?? {})[0] as { schema?: unknown } | undefined)?.schema;
  const { valid, errors } = validatorFor(bundle.name, bundle.doc).validate(schema, body);
  expect(valid, formatErrors(errors)).toBe(true);
}

/**
 * A fetch for the typed clients that records every response's status and Prism's
 * `sl-violations` header, so a test can assert the mock found nothing to object to.
 */
export function recordingFetch() {
  const seen: { url: string; method: string; status: number; violations: string | null; response: Response }[] = [];
  const fetchAndRecord: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    seen.push({ url, method, status: response.status, violations: response.headers.get('sl-violations'), response: response.clone() });
    return response;
  };
  return { fetch: fetchAndRecord, seen };
}

export interface ForbiddenCase {
  name: string;
  role: string;
  request: RawRequest;
  /** Status Prism answers (asserted). */
  prismStatus: number;
  /** true when Prism lets the request through: a known gap. */
  gap?: boolean;
  /** What the spec validator must say about the request. */
  problem: RegExp;
}


/**
 * Each case is sent to the mock: Prism's status is asserted, and so is its body against the
 * operation's documented response; the spec validator must reject the request with `problem`.
 */
export function forbiddenRequests(cases: ForbiddenCase[]) {
  describe('requests the spec forbids', () => {
    for (const c of cases) {
      const { method } = c.request;
      const path = new URL(c.request.url, 'http://x').pathname;
      const title = c.gap
        ? `prism accepts ${c.name} (known gap) — rejected by the spec validator instead [${method} ${path}]`
        : `prism rejects ${c.name} with ${c.prismStatus} [${method} ${path}]`;
      test(title, async () => {
        const answer = await send(c.role, c.request);
        expect(answer.status, `Prism answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(c.prismStatus);
        // Whatever Prism answers is a documented response of the operation.
        expectDocumentedResponse(c.request, answer.status, answer.body);
        const verdict = validateRequest(c.request);
        expect(verdict.valid, `the spec validator accepted ${c.name}`).toBe(false);
        expect(describeProblems(verdict)).toMatch(c.problem);
      });
    }
  });
}

export interface ValidCase {
  name: string;
  role: string;
  request: RawRequest;
  status: number;
}

/** Controls: the same requests done right are accepted by Prism and by the spec validator. */
export function validRequests(cases: ValidCase[]) {
  describe('controls: valid requests', () => {
    for (const c of cases) {
      test(`prism and the spec validator accept a valid ${c.name} request`, async () => {
        const verdict = validateRequest(c.request);
        expect(verdict.valid, describeProblems(verdict)).toBe(true);
        const answer = await send(c.role, c.request);
        expect(answer.status, JSON.stringify(answer.body)).toBe(c.status);
        expect(answer.violations, 'Prism reported violations').toBeNull();
        expectDocumentedResponse(c.request, answer.status, answer.body);
      });
    }
  });
}
