// Sends a generated request and holds the answer to the spec (@svc/openapi-validation's
// validateResponse): a documented status with a body its schema accepts, never a 5xx. A
// failure names its kind (operation, status, what was wrong, numbers elided) so that a long
// run counts failures by kind.
import { validateRequest, validateResponse } from '@svc/openapi-validation';
import type { RunningServer } from './engines.js';
import type { FuzzRequest } from './requests.js';

/** An answer that breaks the spec; thrown by a property, so that fast-check shrinks the request. */
export class AnswerFailure extends Error {
  constructor(
    readonly kind: string,
    detail: string,
  ) {
    super(`${kind}\n${detail}`);
  }
}

/**
 * Requests sent by this process (shrinking's included); of those not broken on purpose, how
 * many the spec's request validation accepts and how many of those were answered with a 2xx:
 * the generator must reach past the 400 path.
 */
export const sent = { requests: 0, unbroken: 0, acceptedBySpec: 0, served: 0 };

function countCoverage(request: FuzzRequest, status: number): void {
  if (request.mutation !== undefined || typeof request.body === 'object') return;
  sent.unbroken++;
  let accepted = false;
  try {
    accepted = validateRequest({ method: request.method, url: request.url, headers: request.headers, body: request.body }).valid;
  } catch {
    // A path no operation has.
  }
  if (!accepted) return;
  sent.acceptedBySpec++;
  if (status >= 200 && status < 300) sent.served++;
}

/** An answer later than this is a failure (a request that makes the server allocate without end never gets one). */
const ANSWER_TIMEOUT_MS = 20_000;

const kindOf = (request: FuzzRequest, status: number | string, why: string) => `${request.operation} ${status} ${why.replace(/\d+/g, 'N').slice(0, 160)}`;

/** The answer's problems against the spec; throws an AnswerFailure when it has any. */
export async function expectDocumentedAnswer(server: RunningServer, request: FuzzRequest): Promise<void> {
  sent.requests++;
  let response: Response;
  try {
    response = await fetch(`${server.url}${request.url}`, { method: request.method, headers: request.headers, body: request.body, signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) });
  } catch (error) {
    const why = (error as Error).cause ? String((error as Error).cause) : (error as Error).message;
    // A server that died answers nothing more: that is the failure, whichever request met it.
    const exited = server.child.exitCode ?? server.child.signalCode;
    throw new AnswerFailure(exited === null ? kindOf(request, 'no answer', why) : `the server exited (${exited})`, why);
  }
  const text = await response.text();
  countCoverage(request, response.status);
  const fail = (why: string) => new AnswerFailure(kindOf(request, response.status, why), `answer: ${text.slice(0, 400)}`);
  if (response.status >= 500) throw fail(`a server error: ${(await server.loggedError(request.method, request.url)) ?? errorText(text)}`);
  const json = (response.headers.get('content-type') ?? '').includes('json');
  let body: unknown = text || undefined;
  if (json && text) {
    try {
      body = JSON.parse(text);
    } catch {
      throw fail('a JSON content type on a body that is not JSON');
    }
  }
  // Answers on a path no operation has (garbage path parameters) or with a method it lacks.
  if (response.status === 404 && /^No operation at/.test(String((body as { error?: unknown } | undefined)?.error ?? ''))) return;
  const path = new URL(request.url, 'http://fuzz.invalid').pathname;
  let problems: string[];
  try {
    problems = validateResponse(request.method, path, response.status, json ? body : undefined);
  } catch {
    if (response.status !== 404 && response.status !== 405) throw fail('an answer on a path no operation has');
    return;
  }
  if (!json && response.status < 300) problems = problems.filter((p) => !p.includes('documents no JSON body'));
  if (problems.length > 0) throw fail(`breaks the spec: ${problems.join('; ')}`);
}

/** The error message of a JSON error body, or the text's start. */
function errorText(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    return String(parsed.error ?? parsed.message ?? text).slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
