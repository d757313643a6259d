import { isJsonContentType, matchOperation, validateResponse } from '@svc/openapi-validation';

export interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Headers;
}

/**
 * Sends a request and reads the answer, held to the spec: its status documented for the
 * operation, its body valid against the status's schema (or of a documented media type), its
 * `X-Request-Id` present and, in an error's JSON object body, repeated as `request_id` (which
 * is then taken out of the body the test sees: the tests compare the rest).
 * Prism's violation reports, when a proxy is in between, surface as failures too.
 * Each request has its own connection: a test that computes for seconds between two
 * requests would otherwise reuse a kept-alive socket the other side has closed meanwhile.
 */
export async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const headers = new Headers(init.headers);
  if (!headers.has('connection')) headers.set('connection', 'close');
  const method = init.method ?? 'GET';
  const response = await fetch(url, { ...init, headers });
  const text = await response.text();
  const violations = response.headers.get('sl-violations');
  if (violations) throw new Error(`Prism reports spec violations for ${method} ${url}: ${violations}\n${text}`);
  // Prism's own answers (application/problem+json), e.g. to a request without credentials, are not the server's.
  if ((response.headers.get('content-type') ?? '').startsWith('application/problem+json')) {
    throw new Error(`Prism answered ${method} ${url} itself, the server never saw it; send it to the server directly: ${text}`);
  }
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the test sees the text
  }
  const contentType = response.headers.get('content-type') ?? 'application/json';
  const problems = specProblems(method, response.url || url, response.status, isJsonContentType(contentType) ? body : text, contentType);
  problems.push(...requestIdProblems(response, body));
  if (problems.length > 0) throw new Error(`the answer to ${method} ${url} breaks the spec: ${problems.join('; ')}\n${text.slice(0, 500)}`);
  if (response.status >= 400 && isObject(body)) delete body.request_id;
  return { status: response.status, body, headers: response.headers };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every answer has a request id, which an error's JSON object body repeats. */
function requestIdProblems(response: Response, body: unknown): string[] {
  const id = response.headers.get('x-request-id');
  if (!id) return ['no X-Request-Id header'];
  if (response.status >= 400 && isObject(body) && body.request_id !== id) return [`the error body's request_id ${JSON.stringify(body.request_id)} is not the X-Request-Id ${id}`];
  return [];
}

/** An answer's problems against the spec; on a path no operation has, only 404 and 405 are right. */
function specProblems(method: string, url: string, status: number, body: unknown, contentType: string): string[] {
  // Preflights belong to no operation (the CORS tests check them).
  if (method === 'OPTIONS') return [];
  const path = new URL(url).pathname.replace(/\/{2,}/g, '/');
  try {
    matchOperation(method, path);
  } catch {
    return status === 404 || status === 405 ? [] : [`status ${status} on ${method} ${path}, which no operation serves`];
  }
  return validateResponse(method, path, status, body, contentType);
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return send(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

export function postForm(url: string, fields: Record<string, string>): Promise<Answer> {
  return send(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
}
