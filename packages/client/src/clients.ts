import createClient, { type HeadersOptions, type Middleware } from 'openapi-fetch';
import type { CallOptions, SvcClient } from './client-types.js';
import { responseError } from './errors.js';
import { callPromise, type Answer } from './raw.js';
import { operationRules } from './generated/rules.js';
import { servers } from './generated/servers.js';
import type { OperationRule, SecuritySchemeRule } from './rule-types.js';
import type { Logger } from './logging.js';
import { systemClock, type Clock } from './pacing.js';
import { basicAuthorization, prepareInit, type PreparableInit } from './serialize.js';
import { attemptingFetch } from './transport.js';
import type { ApiClientPaths, AppClientPaths, ExperimentClientPaths, IngestClientPaths } from './types.js';

export type Region = 'standard' | 'eu';

/** Credentials of a project and an experiment deployment; each factory requires the ones it needs. */
export interface SvcCredentials {
  /** The project's API key (ingestion; user name of HTTP Basic on the application host). */
  apiKey?: string;
  /** The project's secret key (password of HTTP Basic on the application host). */
  secretKey?: string;
  /** An experiment deployment key (`Authorization: Api-Key <key>`). */
  deploymentKey?: string;
}

export interface ClientBaseOptions extends SvcCredentials {
  /** Data residency region of the default base URL; default `standard`. */
  region?: Region;
  /** Base URL of the host (overrides `region`). */
  baseUrl?: string;
  /** Custom fetch (default `globalThis.fetch`), e.g. for tests or proxies. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: HeadersOptions;
  /**
   * Retries of an idempotent request (GET, HEAD, PUT, DELETE, OPTIONS) or an event upload
   * (`POST /2/httpapi`, `POST /batch`) after 408, 429, 5xx, a failed connection or a timeout;
   * default 2. Every call can override it.
   */
  maxRetries?: number;
  /**
   * Milliseconds one attempt may wait for the answer's headers before it fails with `TimeoutError`;
   * default 60,000. Every call can override it.
   */
  timeout?: number;
  /** Told about each request (`debug`), retry (`warn`) and failure (`error`), credentials masked. */
  logger?: Logger;
  /** Time source of the waits between retries (tests pass a fake one). */
  clock?: Clock;
  /**
   * `true`: an answer other than 2xx rejects with the `SvcError` of its status (`NotFoundError`…)
   * and results always carry `data`. Default `false`: openapi-fetch's `{ data, error, response }`.
   */
  throwOnError?: boolean;
}

/** The options of a factory: `throwOnError` as a literal type picks the client's type. */
type FactoryOptions<Required, Throws extends boolean> = ClientBaseOptions & Required & { throwOnError?: Throws };

export type IngestClientOptions<Throws extends boolean = boolean> = FactoryOptions<{ apiKey: string }, Throws>;
export type AppClientOptions<Throws extends boolean = boolean> = FactoryOptions<{ apiKey: string; secretKey: string }, Throws>;
export type ExperimentClientOptions<Throws extends boolean = boolean> = FactoryOptions<{ deploymentKey: string }, Throws>;
export type ApiClientOptions<Throws extends boolean = boolean> = FactoryOptions<{ apiKey: string }, Throws>;

export type IngestClient<Throws extends boolean = boolean> = SvcClient<IngestClientPaths, Throws>;
export type AppClient<Throws extends boolean = boolean> = SvcClient<AppClientPaths, Throws>;
export type ExperimentClient<Throws extends boolean = boolean> = SvcClient<ExperimentClientPaths, Throws>;
export type ApiClient<Throws extends boolean = boolean> = SvcClient<ApiClientPaths, Throws>;

type Role = keyof typeof servers;

/** The base URL a factory uses: `baseUrl` if given, else the spec's default for the role and region. */
export function resolveBaseUrl(role: string, options: { region?: Region; baseUrl?: string } = {}): string {
  if (options.baseUrl) return options.baseUrl.replace(/\/+$/, '');
  const region = options.region ?? 'standard';
  const byRegion = (servers as Record<string, Partial<Record<Region, string>>>)[role as Role];
  const url = byRegion?.[region];
  if (!url) throw new Error(`No ${region} server is declared for host role ${role}; pass baseUrl`);
  return url;
}

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const;

/** The API key a client injects, for helpers that measure exact request sizes. */
const injectedKeys = new WeakMap<object, string>();
/** @internal */
export function injectedApiKey(client: object): string | undefined {
  return injectedKeys.get(client);
}

function requireOption(value: string | undefined, name: string, factory: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${factory}: ${name} is required`);
  return value;
}

/**
 * Middleware that sets `Authorization` on every operation whose security requirement
 * includes a scheme `authorize` can satisfy (unless the caller set the header already).
 */
function authMiddleware(
  rules: Record<string, OperationRule>,
  authorize: (scheme: SecuritySchemeRule) => string | undefined,
): Middleware {
  return {
    onRequest({ request, schemaPath }) {
      if (request.headers.has('Authorization')) return undefined;
      const rule = rules[`${request.method.toUpperCase()} ${schemaPath}`];
      const schemes = rule ? rule.security.flat() : [];
      for (const scheme of schemes) {
        const value = authorize(scheme);
        if (value !== undefined) {
          request.headers.set('Authorization', value);
          return request;
        }
      }
      return undefined;
    },
  };
}

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 60_000;

/** The non-throwing view of each throwing client, for the helpers that read `{ data, error }`. */
const lenientViews = new WeakMap<object, object>();
/** @internal The client as openapi-fetch answers (`{ data, error, response }`), whatever its `throwOnError`. */
export function lenient<C extends object>(client: C): C {
  return (lenientViews.get(client) ?? client) as C;
}

function checkMaxRetries(value: unknown, where: string): number | undefined {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) throw new RangeError(`${where}: maxRetries must be an integer ≥ 0`);
  return value as number | undefined;
}

function checkTimeout(value: unknown, where: string): number | undefined {
  if (value !== undefined && !(typeof value === 'number' && value > 0)) throw new RangeError(`${where}: timeout must be a number of milliseconds > 0`);
  return value as number | undefined;
}

/**
 * A client for one host role over openapi-fetch: each call gets the generated operation rules
 * (query/body serialization, API key placement) applied to its options, and a fetch that
 * retries, times out and logs (see `attemptingFetch`). With `throwOnError`, an answer other
 * than 2xx is thrown as the `SvcError` of its status. Every call's promise has `withResponse()`.
 */
function createRoleClient<Paths extends {}, Throws extends boolean>(
  role: string,
  options: ClientBaseOptions & { throwOnError?: Throws },
  apiKey: string | undefined,
  authorize?: (scheme: SecuritySchemeRule) => string | undefined,
): SvcClient<Paths, Throws> {
  const rules = operationRules[role] ?? {};
  const maxRetries = checkMaxRetries(options.maxRetries, 'client options') ?? DEFAULT_MAX_RETRIES;
  const timeout = checkTimeout(options.timeout, 'client options') ?? DEFAULT_TIMEOUT_MS;
  const clientFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const base = createClient<Paths>({
    baseUrl: resolveBaseUrl(role, options),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  if (authorize) base.use(authMiddleware(rules, authorize));
  const request = (base as unknown as { request: (method: string, url: string, init?: PreparableInit) => Promise<Answer> }).request;

  const send = async (key: string, method: string, path: string, init: (PreparableInit & CallOptions) | undefined, throws: boolean): Promise<Answer> => {
    const { maxRetries: callRetries, timeout: callTimeout, ...rest } = init ?? {};
    const rule = rules[key];
    const prepared: PreparableInit = rule ? prepareInit(rule, rest, apiKey) : rest;
    prepared.fetch = attemptingFetch({
      action: key,
      retryable: rule?.retrySafe ?? false,
      maxRetries: checkMaxRetries(callRetries, key) ?? maxRetries,
      timeout: checkTimeout(callTimeout, key) ?? timeout,
      fetch: (rest.fetch as typeof clientFetch | undefined) ?? clientFetch,
      clock: options.clock ?? systemClock,
      logger: options.logger,
    });
    const answer = await request(method, path, prepared);
    if (throws && !answer.response.ok) throw responseError(key, answer.response.status, answer.error, answer.response.headers);
    return answer;
  };
  const call = (method: string, path: string, init: (PreparableInit & CallOptions) | undefined, throws: boolean) => {
    const key = `${method.toUpperCase()} ${path}`;
    return callPromise(send(key, method, path, init, throws), key);
  };

  const view = (throws: boolean) => {
    const client: Record<string, unknown> = { use: base.use, eject: base.eject };
    for (const method of METHODS) client[method] = (url: string, init?: PreparableInit) => call(method, url, init, throws);
    client.request = (method: string, url: string, init?: PreparableInit) => call(method, url, init, throws);
    if (apiKey !== undefined) injectedKeys.set(client, apiKey);
    return client;
  };
  const client = view(options.throwOnError === true);
  if (options.throwOnError === true) lenientViews.set(client, view(false));
  return client as unknown as SvcClient<Paths, Throws>;
}

/**
 * Client of the ingestion host role (event upload, batch, group identification, attribution).
 * The API key is injected where each operation takes it: the JSON body of `/2/httpapi` and
 * `/batch`, the form of `/groupidentify` and `/attribution` (the query string when an
 * attribution request has no body).
 */
export function createIngestClient<Throws extends boolean = false>(options: IngestClientOptions<Throws>): IngestClient<Throws> {
  const apiKey = requireOption(options.apiKey, 'apiKey', 'createIngestClient');
  return createRoleClient<IngestClientPaths, Throws>('ingest', options, apiKey);
}

/** Client of the application host role: feedback ingestion and the other HTTP Basic groups. */
export function createAppClient<Throws extends boolean = false>(options: AppClientOptions<Throws>): AppClient<Throws> {
  const apiKey = requireOption(options.apiKey, 'apiKey', 'createAppClient');
  const secretKey = requireOption(options.secretKey, 'secretKey', 'createAppClient');
  const basic = basicAuthorization(apiKey, secretKey);
  return createRoleClient<AppClientPaths, Throws>('app', options, undefined, (scheme) =>
    scheme.type === 'http' && scheme.scheme === 'basic' ? basic : undefined,
  );
}

/** Client of the experiment host role (remote evaluation, flag configurations). */
export function createExperimentClient<Throws extends boolean = false>(
  options: ExperimentClientOptions<Throws>,
): ExperimentClient<Throws> {
  const deploymentKey = requireOption(options.deploymentKey, 'deploymentKey', 'createExperimentClient');
  return createRoleClient<ExperimentClientPaths, Throws>('experiment', options, undefined, (scheme) =>
    scheme.type === 'apiKey' && scheme.in === 'header' && scheme.param?.toLowerCase() === 'authorization'
      ? `Api-Key ${deploymentKey}`
      : undefined,
  );
}

/**
 * Client of the API host role (user mapping writes; attribution is served here too). The API
 * key is injected where each operation's `x-svc-credentials` puts it first: the `api_key`
 * query parameter of `/usermap`. No EU-residency server is declared for this role: pass
 * `baseUrl` for one.
 */
export function createApiClient<Throws extends boolean = false>(options: ApiClientOptions<Throws>): ApiClient<Throws> {
  const apiKey = requireOption(options.apiKey, 'apiKey', 'createApiClient');
  return createRoleClient<ApiClientPaths, Throws>('api', options, apiKey);
}
