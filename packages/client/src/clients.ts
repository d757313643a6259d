import createClient, { type Client, type HeadersOptions, type Middleware } from 'openapi-fetch';
import { operationRules } from './generated/rules.js';
import { servers } from './generated/servers.js';
import type { OperationRule, SecuritySchemeRule } from './rule-types.js';
import { basicAuthorization, prepareInit, type PreparableInit } from './serialize.js';
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
}

export type IngestClientOptions = ClientBaseOptions & { apiKey: string };
export type AppClientOptions = ClientBaseOptions & { apiKey: string; secretKey: string };
export type ExperimentClientOptions = ClientBaseOptions & { deploymentKey: string };
export type ApiClientOptions = ClientBaseOptions & { apiKey: string };

export type IngestClient = Client<IngestClientPaths>;
export type AppClient = Client<AppClientPaths>;
export type ExperimentClient = Client<ExperimentClientPaths>;
export type ApiClient = Client<ApiClientPaths>;

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

/**
 * An openapi-fetch client for one host role whose methods apply the generated operation rules
 * (query/body serialization, API key placement) to each call before openapi-fetch sees it.
 */
function createRoleClient<Paths extends {}>(
  role: string,
  options: ClientBaseOptions,
  apiKey: string | undefined,
  authorize?: (scheme: SecuritySchemeRule) => string | undefined,
): Client<Paths> {
  const rules = operationRules[role] ?? {};
  const base = createClient<Paths>({
    baseUrl: resolveBaseUrl(role, options),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  if (authorize) base.use(authMiddleware(rules, authorize));

  const prepare = (method: string, path: string, init: PreparableInit | undefined) => {
    const rule = rules[`${method.toUpperCase()} ${path}`];
    return rule ? prepareInit(rule, init, apiKey) : init;
  };
  type AnyMethod = (url: string, init?: PreparableInit) => Promise<unknown>;
  const loose = base as unknown as Record<(typeof METHODS)[number], AnyMethod> & {
    request: (method: string, url: string, init?: PreparableInit) => Promise<unknown>;
  };
  const wrapped: Record<string, unknown> = { ...base };
  for (const method of METHODS) {
    wrapped[method] = (url: string, init?: PreparableInit) => loose[method](url, prepare(method, url, init));
  }
  wrapped.request = (method: string, url: string, init?: PreparableInit) =>
    loose.request(method, url, prepare(method, url, init));
  const client = wrapped as unknown as Client<Paths>;
  if (apiKey !== undefined) injectedKeys.set(client, apiKey);
  return client;
}

/**
 * Client of the ingestion host role (event upload, batch, group identification, attribution).
 * The API key is injected where each operation takes it: the JSON body of `/2/httpapi` and
 * `/batch`, the form of `/groupidentify` and `/attribution` (the query string when an
 * attribution request has no body).
 */
export function createIngestClient(options: IngestClientOptions): IngestClient {
  const apiKey = requireOption(options.apiKey, 'apiKey', 'createIngestClient');
  return createRoleClient<IngestClientPaths>('ingest', options, apiKey);
}

/** Client of the application host role: feedback ingestion and the other HTTP Basic groups. */
export function createAppClient(options: AppClientOptions): AppClient {
  const apiKey = requireOption(options.apiKey, 'apiKey', 'createAppClient');
  const secretKey = requireOption(options.secretKey, 'secretKey', 'createAppClient');
  const basic = basicAuthorization(apiKey, secretKey);
  return createRoleClient<AppClientPaths>('app', options, undefined, (scheme) =>
    scheme.type === 'http' && scheme.scheme === 'basic' ? basic : undefined,
  );
}

/** Client of the experiment host role (remote evaluation, flag configurations). */
export function createExperimentClient(options: ExperimentClientOptions): ExperimentClient {
  const deploymentKey = requireOption(options.deploymentKey, 'deploymentKey', 'createExperimentClient');
  return createRoleClient<ExperimentClientPaths>('experiment', options, undefined, (scheme) =>
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
export function createApiClient(options: ApiClientOptions): ApiClient {
  const apiKey = requireOption(options.apiKey, 'apiKey', 'createApiClient');
  return createRoleClient<ApiClientPaths>('api', options, apiKey);
}
