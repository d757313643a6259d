import { maskBody } from './logging.js';

/**
 * The errors of the client: one base `SvcError`; `ResponseError` and its subclasses for an
 * answer other than 2xx (one class per documented status family); `ConnectionError` and
 * `TimeoutError` when no answer came.
 */
export class SvcError extends Error {
  override name = 'SvcError';
  /** HTTP status of the answer; `undefined` when no answer came. */
  readonly status: number | undefined;
  /** The parsed error body (JSON answers) or the body text; `undefined` when no answer came. */
  readonly body: unknown;
  /** The answer's headers (empty when no answer came). */
  readonly headers: Headers;
  /** The answer's `X-Request-Id`, when it has one. */
  readonly requestId: string | undefined;

  constructor(
    /** What was being done, e.g. `listing session replays` or `GET /api/3/cohorts`. */
    readonly action: string,
    message: string,
    answer: { status?: number; body?: unknown; headers?: Headers } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.status = answer.status;
    this.body = answer.body;
    this.headers = answer.headers ?? new Headers();
    this.requestId = requestIdOf(this.headers);
  }
}

/**
 * An answer other than 2xx (or a file that cannot be read). The client throws the subclass of
 * the status family (`NotFoundError`…), this class itself for an undocumented status. Each class has
 * its own `name`; `instanceof ResponseError` holds for all of them.
 */
export class ResponseError<Body = unknown, Status extends number = number> extends SvcError {
  override name = 'ResponseError';
  declare readonly status: Status;
  declare readonly body: Body;

  constructor(action: string, status: number, body: Body, headers?: Headers) {
    super(action, `${action}: HTTP ${status}${detail(body)}`, { status, body, ...(headers ? { headers } : {}) });
  }
}

/** 400: the request is invalid; `issues` / `missing_field` when the body names them. */
export class BadRequestError<Body = unknown> extends ResponseError<Body, 400> {
  override name = 'BadRequestError';
  /** Every problem found (bodies of the `ValidationError` shape). */
  readonly issues: unknown[] | undefined;
  /** The request-level field that is missing (event uploads). */
  readonly missing_field: string | undefined;

  constructor(action: string, status: number, body: Body, headers?: Headers) {
    super(action, status, body, headers);
    const fields = (typeof body === 'object' && body !== null ? body : {}) as { issues?: unknown; missing_field?: unknown };
    this.issues = Array.isArray(fields.issues) ? fields.issues : undefined;
    this.missing_field = typeof fields.missing_field === 'string' ? fields.missing_field : undefined;
  }
}

/** 401: credentials missing or wrong. */
export class AuthenticationError<Body = unknown> extends ResponseError<Body, 401> {
  override name = 'AuthenticationError';
}
/** 403: the credentials do not allow this (e.g. taxonomy outside the Enterprise plan). */
export class PermissionDeniedError<Body = unknown> extends ResponseError<Body, 403> {
  override name = 'PermissionDeniedError';
}
/** 404: no such resource. */
export class NotFoundError<Body = unknown> extends ResponseError<Body, 404> {
  override name = 'NotFoundError';
}
/**
 * 409: the request conflicts with the resource's state (a name taken, a job already
 * submitted, an export not completed yet). Not retried: the specs never call it transient.
 */
export class ConflictError<Body = unknown> extends ResponseError<Body, 409> {
  override name = 'ConflictError';
}
/** 413: the body is too large; split it. */
export class PayloadTooLargeError<Body = unknown> extends ResponseError<Body, 413> {
  override name = 'PayloadTooLargeError';
}

/** 429: `retryAfter` is the answer's `Retry-After` in seconds (an HTTP date counts from now). */
export class RateLimitError<Body = unknown> extends ResponseError<Body, 429> {
  override name = 'RateLimitError';
  readonly retryAfter: number | undefined;

  constructor(action: string, status: number, body: Body, headers?: Headers) {
    super(action, status, body, headers);
    const ms = retryAfterMs(this.headers);
    this.retryAfter = ms === undefined ? undefined : ms / 1000;
  }
}

/** Any 5xx answer. */
export class InternalServerError<Body = unknown> extends ResponseError<Body> {
  override name = 'InternalServerError';
}

/** No answer: the connection failed (the fetch rejected); `cause` is what fetch threw. */
export class ConnectionError extends SvcError {
  override name = 'ConnectionError';
  declare readonly status: undefined;
  declare readonly body: undefined;

  constructor(action: string, cause: unknown, message = `${action}: connection failed${causeText(cause)}`) {
    super(action, message, {}, { cause });
  }
}

/** No answer within the `timeout` (per attempt). */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';

  constructor(action: string, timeoutMs: number) {
    super(action, undefined, `${action}: no answer within ${timeoutMs} ms`);
  }
}

type ResponseErrorClass = new (action: string, status: number, body: unknown, headers?: Headers) => ResponseError;

const BY_STATUS: Record<number, ResponseErrorClass> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: RateLimitError,
};

/** The error of the status family of an answer other than 2xx (`ResponseError` for an undocumented one). */
export function responseError(action: string, status: number, body: unknown, headers?: Headers): ResponseError {
  const Class = BY_STATUS[status] ?? (status >= 500 && status <= 599 ? InternalServerError : ResponseError);
  return new Class(action, status, body, headers);
}

/** The answer's `X-Request-Id`, when it has one. */
export function requestIdOf(headers: Headers): string | undefined {
  return headers.get('x-request-id') ?? undefined;
}

/** `Retry-After` (seconds, possibly fractional, or an HTTP date) in milliseconds from `now`; never negative. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function detail(body: unknown): string {
  if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') {
    return `: ${(body as { error: string }).error}`;
  }
  return typeof body === 'string' && body !== '' ? `: ${body.slice(0, 200)}` : '';
}

/** What fetch said, credentials masked (some fetch implementations quote the URL). */
function causeText(cause: unknown): string {
  return cause instanceof Error && cause.message ? `: ${maskBody(cause.message, 500)}` : '';
}
