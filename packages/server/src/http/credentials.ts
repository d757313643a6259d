// Which credentials an operation takes, read from its spec (`security`, the schemes'
// `x-svc-credential` and `x-svc-credentials`), how a request's credentials resolve to a
// caller, and the answer to missing or wrong ones (status and body shape as the operation
// documents them).
import type { Doc, OperationRef } from '@svc/openapi-validation';
import { deref } from '@svc/openapi-validation';
import type { Caller } from './operations.js';
import type { Tenancy } from '../shared/tenancy.js';

interface Place {
  in: string;
  name: string;
}

/** One way of presenting credentials: one requirement of the operation's `security`. */
export type CredentialAlternative =
  /** The API key in one of `places` (`body`/`form` field or `query` parameter). */
  | { kind: 'apiKey'; places: Place[] }
  | { kind: 'basic' }
  /** The API key as `Authorization: Bearer <key>` (the session-replay SDK). */
  | { kind: 'bearer' }
  | { kind: 'deploymentKey' }
  /** API key and secret key as two parameters (`x-svc-credential` api-key / secret-key). */
  | { kind: 'keyPair'; apiKey: Place; secretKey: Place };

export interface CredentialRule {
  /** Tried in order; none means the operation needs no credentials. */
  alternatives: CredentialAlternative[];
  /** Whether a credential may travel in the body (then it is resolved after parsing it). */
  inBody: boolean;
  /**
   * Statuses of missing and of wrong credentials: 401 where the operation documents it,
   * else 400 (the ingestion group); wrong ones get `x-svc-invalid-credentials-status`
   * where the operation names one.
   */
  failureStatus: Record<CredentialFailure, number>;
  /** The documented error bodies carry `success: false` and `errors` (taxonomy), not `code` and `error`. */
  envelope: 'code' | 'success';
}

export type CredentialFailure = 'missing' | 'invalid';

function alternativeOf(doc: Doc, requirement: Record<string, string[]>): CredentialAlternative | undefined {
  const schemes = Object.keys(requirement).map((name) => deref<Doc>(doc, doc.components?.securitySchemes?.[name]));
  const [only] = schemes;
  if (schemes.length === 1 && only?.type === 'http' && String(only.scheme).toLowerCase() === 'basic') return { kind: 'basic' };
  if (schemes.length === 1 && only?.type === 'http' && String(only.scheme).toLowerCase() === 'bearer' && only['x-svc-credential'] === 'api-key') return { kind: 'bearer' };
  if (schemes.length === 1 && only?.type === 'apiKey' && only.in === 'header' && String(only.name).toLowerCase() === 'authorization') return { kind: 'deploymentKey' };
  const carrying = (credential: string) => schemes.find((scheme) => scheme?.['x-svc-credential'] === credential);
  const apiKey = carrying('api-key');
  const secretKey = carrying('secret-key');
  if (schemes.length === 2 && apiKey && secretKey) return { kind: 'keyPair', apiKey: { in: apiKey.in, name: apiKey.name }, secretKey: { in: secretKey.in, name: secretKey.name } };
  if (schemes.length === 1 && apiKey?.type === 'apiKey') return { kind: 'apiKey', places: [{ in: apiKey.in, name: apiKey.name }] };
  return undefined;
}

function credentialAlternatives(ref: OperationRef): CredentialAlternative[] {
  const places = (ref.op['x-svc-credentials'] as Place[] | undefined) ?? [];
  if (places.length > 0) return [{ kind: 'apiKey', places }];
  const security = (ref.op.security ?? ref.bundle.doc.security ?? []) as Record<string, string[]>[];
  return security.flatMap((requirement) => alternativeOf(ref.bundle.doc, requirement) ?? []);
}

export function credentialRule(ref: OperationRef): CredentialRule {
  const doc = ref.bundle.doc;
  const responses = (ref.op.responses ?? {}) as Doc;
  const missing = responses['401'] ? 401 : 400;
  const invalid = (ref.op['x-svc-invalid-credentials-status'] as number | undefined) ?? missing;
  const schema = deref<Doc>(doc, deref<Doc>(doc, responses[String(missing)])?.content?.['application/json']?.schema);
  const alternatives = credentialAlternatives(ref);
  return {
    alternatives,
    inBody: alternatives.some((a) => a.kind === 'apiKey' && a.places.some((p) => p.in === 'body' || p.in === 'form')),
    failureStatus: { missing, invalid },
    envelope: schema?.properties?.success ? 'success' : 'code',
  };
}

const HOW: Record<CredentialAlternative['kind'], string> = {
  apiKey: 'the api_key',
  basic: 'HTTP Basic with the API key and the secret key',
  bearer: 'Authorization: Bearer <API key>',
  deploymentKey: 'Authorization: Api-Key <deployment key>',
  keyPair: 'the api_key and secret_key query parameters',
};
const INVALID: Record<CredentialAlternative['kind'], string> = {
  apiKey: 'Invalid API key',
  basic: 'Invalid API key or secret key',
  bearer: 'Invalid API key',
  deploymentKey: 'Invalid deployment key',
  keyPair: 'Invalid API key or secret key',
};

/** The documented answer to missing or wrong credentials. */
export function credentialFailure(rule: CredentialRule, failure: CredentialFailure): { status: number; body: unknown } {
  const status = rule.failureStatus[failure];
  const [first] = rule.alternatives;
  const message = !first ? 'Unauthorized' : failure === 'invalid' ? INVALID[first.kind] : `Missing credentials: use ${rule.alternatives.map((a) => HOW[a.kind]).join(' or ')}`;
  return { status, body: rule.envelope === 'success' ? { success: false, errors: [{ message }] } : { code: status, error: message } };
}

export type CredentialCheck = { caller: Caller } | { failure: CredentialFailure };

export interface PresentedCredentials {
  query: URLSearchParams;
  headers: Map<string, string>;
  body: unknown;
}

function valueAt(place: Place, request: PresentedCredentials): string | undefined {
  const value =
    place.in === 'query'
      ? request.query.get(place.name)
      : place.in === 'header'
        ? request.headers.get(place.name.toLowerCase())
        : request.body && typeof request.body === 'object' && Object.hasOwn(request.body, place.name)
          ? (request.body as Record<string, unknown>)[place.name]
          : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The token of an `Authorization: <word> <token>` header with this scheme word. */
function authorizationToken(request: PresentedCredentials, word: string): string | undefined {
  const [presented, token] = (request.headers.get('authorization') ?? '').split(/\s+/, 2);
  return presented?.toLowerCase() === word && token ? token : undefined;
}

/** The caller of an alternative's credentials; undefined when they are not presented. */
async function resolveAlternative(alternative: CredentialAlternative, request: PresentedCredentials, tenancy: Tenancy): Promise<CredentialCheck | undefined> {
  const known = (caller: Caller | undefined): CredentialCheck => (caller ? { caller } : { failure: 'invalid' });
  switch (alternative.kind) {
    case 'apiKey': {
      const key = alternative.places.map((place) => valueAt(place, request)).find((value) => value !== undefined);
      if (key === undefined) return undefined;
      const project = tenancy.projectByApiKey(key);
      return known(project && { project });
    }
    case 'keyPair': {
      const apiKey = valueAt(alternative.apiKey, request);
      const secretKey = valueAt(alternative.secretKey, request);
      if (apiKey === undefined || secretKey === undefined) return undefined;
      const project = await tenancy.projectByCredentials(apiKey, secretKey);
      return known(project && { project });
    }
    case 'basic': {
      const [word, encoded] = (request.headers.get('authorization') ?? '').split(/\s+/, 2);
      if (word?.toLowerCase() !== 'basic' || !encoded) return undefined;
      const decoded = Buffer.from(encoded, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 1) return undefined;
      const project = await tenancy.projectByCredentials(decoded.slice(0, colon), decoded.slice(colon + 1));
      return known(project && { project });
    }
    case 'bearer': {
      const key = authorizationToken(request, 'bearer');
      if (key === undefined) return undefined;
      const project = tenancy.projectByApiKey(key);
      return known(project && { project });
    }
    case 'deploymentKey': {
      const key = authorizationToken(request, 'api-key');
      if (key === undefined) return undefined;
      const deployment = await tenancy.deploymentByKey(key);
      const project = deployment && tenancy.projectOf(deployment.app_id);
      return known(deployment && project && { deployment, project });
    }
  }
}

/** Every presented alternative must name the same, known caller; none presented is "missing". */
export async function resolveCaller(rule: CredentialRule, request: PresentedCredentials, tenancy: Tenancy): Promise<CredentialCheck> {
  if (rule.alternatives.length === 0) return { caller: {} };
  const checks = (await Promise.all(rule.alternatives.map((alternative) => resolveAlternative(alternative, request, tenancy)))).flatMap((check) => check ?? []);
  const [first] = checks;
  if (!first) return { failure: 'missing' };
  if (checks.some((check) => 'failure' in check || check.caller.project !== ('caller' in first ? first.caller.project : undefined))) return { failure: 'invalid' };
  return first;
}
