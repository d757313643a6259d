/**
 * An answer other than 2xx (or a file that cannot be read), thrown by the helpers that cannot
 * hand back a list of failures: iterators and downloads.
 */
export class ResponseError<Body = unknown> extends Error {
  override readonly name = 'ResponseError';

  constructor(
    /** What was being done, e.g. `listing session replays`. */
    readonly action: string,
    /** HTTP status of the answer. */
    readonly status: number,
    /** The parsed error body (JSON answers) or the body text. */
    readonly body: Body,
  ) {
    super(`${action}: HTTP ${status}${detail(body)}`);
  }
}

function detail(body: unknown): string {
  if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') {
    return `: ${(body as { error: string }).error}`;
  }
  return typeof body === 'string' && body !== '' ? `: ${body.slice(0, 200)}` : '';
}
