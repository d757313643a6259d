// Raw access in the manner of Stainless SDKs: `await call.withResponse()` is the answer's data
// with the `Response` it came in and its request ID, whichever way the client reports errors.
import { requestIdOf, responseError } from './errors.js';

/** A 2xx answer's data, the raw `Response` (its body already read) and its `X-Request-Id`. */
export interface WithResponse<D> {
  data: D;
  response: Response;
  requestId: string | undefined;
}

/** The `data` of the success branch of an operation's result. */
export type SuccessData<R> = Extract<R, { data: unknown }>['data'];

/** What an operation call returns: its result as before, plus `withResponse()`. */
export type CallPromise<R> = Promise<R> & {
  /**
   * The success data with its `response` and `requestId`; an answer other than 2xx rejects with
   * the `SvcError` of its status (also on a client created without `throwOnError`).
   */
  withResponse(): Promise<WithResponse<SuccessData<R>>>;
};

/** What openapi-fetch resolves with. */
export interface Answer<D = unknown> {
  data?: D;
  error?: unknown;
  response: Response;
}

export const withResponseOf = <D>(data: D, response: Response): WithResponse<D> => ({ data, response, requestId: requestIdOf(response.headers) });

/** The data of a 2xx answer with its response; any other answer throws the `SvcError` of its status. */
function successOf<D>(answer: Answer<D>, action: string): WithResponse<D> {
  const { data, error, response } = answer;
  if (!response.ok) throw responseError(action, response.status, error, response.headers);
  return withResponseOf(data as D, response);
}

/** `answer` with `withResponse()`, which reads the same answer (no second request). */
export function callPromise<R extends Answer>(answer: Promise<R>, action: string): CallPromise<R> {
  return Object.assign(answer, { withResponse: () => answer.then((settled) => successOf(settled, action)) }) as CallPromise<R>;
}
