import { validateResponse } from '@svc/openapi-validation';

export interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Headers;
}

/**
 * Sends a request and reads the answer; Prism's violation reports surface as failures.
 * Each request has its own connection: a test that computes for seconds between two
 * requests would otherwise reuse a kept-alive socket the other side has closed meanwhile.
 */
export async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const headers = new Headers(init.headers);
  if (!headers.has('connection')) headers.set('connection', 'close');
  const response = await fetch(url, { ...init, headers });
  const text = await response.text();
  const violations = response.headers.get('sl-violations');
  if (violations) throw new Error(`Prism reports spec violations for ${init.method ?? 'GET'} ${url}: ${violations}\n${text}`);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the test sees the text
  }
  return { status: response.status, body, headers: response.headers };
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return send(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

export function postForm(url: string, fields: Record<string, string>): Promise<Answer> {
  return send(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
}

/**
 * For the few requests Prism cannot forward (gzip bodies, `//` paths, bodies over its own
 * 10 MB limit): sent to the server directly, the answer checked against the spec here.
 */
export async function sendDirect(url: string, init: RequestInit = {}): Promise<Answer> {
  const answer = await send(url, init);
  const path = new URL(url).pathname.replace(/\/{2,}/g, '/');
  const problems = validateResponse(init.method ?? 'GET', path, answer.status, answer.body);
  if (problems.length > 0) throw new Error(`the answer breaks the spec: ${problems.join('; ')}`);
  return answer;
}
