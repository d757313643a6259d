// The types of the clients: openapi-fetch's methods with the per-call options of this layer,
// `withResponse()` on every call, and, for clients created with `throwOnError: true`, results
// that always carry `data`.
import type { ClientPathsWithMethod, Client, FetchResponse, MaybeOptionalInit, Middleware } from 'openapi-fetch';
import type { CallPromise } from './raw.js';

/** Options every call takes, besides openapi-fetch's, overriding the client's for that call. */
export interface CallOptions {
  /** Retries of a retryable request (0 for none); default: the client's (2). */
  maxRetries?: number;
  /** Milliseconds an attempt may take before it fails with `TimeoutError`; default: the client's (60,000). */
  timeout?: number;
}

type Method = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
type Media = `${string}/${string}`;
type PathsWith<Paths extends {}, M extends Method> = ClientPathsWithMethod<Client<Paths>, M>;

/** The operation of `M` at `Path`. */
type Operation<Paths, Path extends keyof Paths, M extends Method> =
  Paths[Path][M & keyof Paths[Path]] extends infer Op extends Record<string | number, any> ? Op : never;

/** openapi-fetch's init plus the call options (keeps `undefined` where the init may be left out). */
type WithCallOptions<Init> = Init extends undefined ? undefined : Init & CallOptions;
/** The init argument: optional when nothing in it is required. */
type InitParam<Init> = {} extends Init ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/** openapi-fetch's `{ data, error, response }`; with `throwOnError`, only the success branch (`data` and `response`). */
export type CallResult<R, Throws extends boolean> = Throws extends true ? Extract<R, { data: unknown }> : R;

type SvcMethod<Paths extends {}, M extends Method, Throws extends boolean> = <
  Path extends PathsWith<Paths, M>,
  Init extends WithCallOptions<MaybeOptionalInit<Paths[Path], M & keyof Paths[Path]>>,
>(
  url: Path,
  ...init: InitParam<Init>
) => CallPromise<CallResult<FetchResponse<Operation<Paths, Path, M>, Init, Media>, Throws>>;

type SvcRequestMethod<Paths extends {}, Throws extends boolean> = <
  M extends Method,
  Path extends PathsWith<Paths, M>,
  Init extends WithCallOptions<MaybeOptionalInit<Paths[Path], M & keyof Paths[Path]>>,
>(
  method: M,
  url: Path,
  ...init: InitParam<Init>
) => CallPromise<CallResult<FetchResponse<Operation<Paths, Path, M>, Init, Media>, Throws>>;

/**
 * A client of one host role: openapi-fetch's methods (`GET`, `POST`…, `request`, `use`,
 * `eject`) with retries, timeouts and logging. `Throws`: created with `throwOnError: true`,
 * an answer other than 2xx rejects with the `SvcError` of its status instead of resolving
 * with `error`.
 */
export interface SvcClient<in out Paths extends {}, out Throws extends boolean = false> {
  request: SvcRequestMethod<Paths, Throws>;
  GET: SvcMethod<Paths, 'get', Throws>;
  PUT: SvcMethod<Paths, 'put', Throws>;
  POST: SvcMethod<Paths, 'post', Throws>;
  DELETE: SvcMethod<Paths, 'delete', Throws>;
  OPTIONS: SvcMethod<Paths, 'options', Throws>;
  HEAD: SvcMethod<Paths, 'head', Throws>;
  PATCH: SvcMethod<Paths, 'patch', Throws>;
  TRACE: SvcMethod<Paths, 'trace', Throws>;
  use(...middleware: Middleware[]): void;
  eject(...middleware: Middleware[]): void;
}
