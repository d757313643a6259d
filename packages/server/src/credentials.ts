// Which credentials an operation takes, read from its spec (`security` and
// `x-svc-credentials`), how a request's credentials resolve to a caller, and the answer
// to missing or wrong ones (status and body shape as the operation documents them).
import type { Doc, OperationRef } from '@svc/openapi-validation';
import { deref } from '@svc/openapi-validation';
import type { Caller } from './handlers.js';
import type { Tenancy } from './tenancy.js';

export type CredentialKind = 'none' | 'apiKey' | 'basic' | 'deploymentKey';

export interface CredentialRule {
  kind: CredentialKind;
  /** For `apiKey`: where the key may travel (`body`/`form` field or `query` parameter). */
  places: { in: string; name: string }[];
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

function credentialKind(ref: OperationRef): Pick<CredentialRule, 'kind' | 'places'> {
  const doc = ref.bundle.doc;
  const places = (ref.op['x-svc-credentials'] as { in: string; name: string }[] | undefined) ?? [];
  if (places.length > 0) return { kind: 'apiKey', places };
  const schemes = (doc.components?.securitySchemes ?? {}) as Doc;
  for (const requirement of (ref.op.security ?? doc.security ?? []) as Record<string, string[]>[]) {
    for (const name of Object.keys(requirement)) {
      const scheme = deref<Doc>(doc, schemes[name]);
      if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'basic') return { kind: 'basic', places: [] };
      if (scheme.type === 'apiKey' && scheme.in === 'header' && String(scheme.name).toLowerCase() === 'authorization') return { kind: 'deploymentKey', places: [] };
    }
  }
  return { kind: 'none', places: [] };
}

export function credentialRule(ref: OperationRef): CredentialRule {
  const doc = ref.bundle.doc;
  const responses = (ref.op.responses ?? {}) as Doc;
  const missing = responses['401'] ? 401 : 400;
  const invalid = (ref.op['x-svc-invalid-credentials-status'] as number | undefined) ?? missing;
  const schema = deref<Doc>(doc, deref<Doc>(doc, responses[String(missing)])?.content?.['application/json']?.schema);
  return { ...credentialKind(ref), failureStatus: { missing, invalid }, envelope: schema?.properties?.success ? 'success' : 'code' };
}

const FAILURE_MESSAGES: Record<Exclude<CredentialKind, 'none'>, Record<CredentialFailure, string>> = {
  apiKey: { missing: 'Missing api_key', invalid: 'Invalid API key' },
  basic: { missing: 'Missing credentials: use HTTP Basic with the API key and the secret key', invalid: 'Invalid API key or secret key' },
  deploymentKey: { missing: 'Missing deployment key: send Authorization: Api-Key <deployment key>', invalid: 'Invalid deployment key' },
};

/** The documented answer to missing or wrong credentials. */
export function credentialFailure(rule: CredentialRule, failure: CredentialFailure): { status: number; body: unknown } {
  const status = rule.failureStatus[failure];
  const message = rule.kind === 'none' ? 'Unauthorized' : FAILURE_MESSAGES[rule.kind][failure];
  return { status, body: rule.envelope === 'success' ? { success: false, errors: [{ message }] } : { code: status, error: message } };
}

export type CredentialCheck = { caller: Caller } | { failure: CredentialFailure };

export interface PresentedCredentials {
  query: URLSearchParams;
  headers: Map<string, string>;
  body: unknown;
}

function apiKeyFrom(rule: CredentialRule, request: PresentedCredentials): string | undefined {
  for (const place of rule.places) {
    const value =
      place.in === 'query'
        ? request.query.get(place.name)
        : request.body && typeof request.body === 'object'
          ? (request.body as Record<string, unknown>)[place.name]
          : undefined;
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

export function resolveCaller(rule: CredentialRule, request: PresentedCredentials, tenancy: Tenancy): CredentialCheck {
  switch (rule.kind) {
    case 'none':
      return { caller: {} };
    case 'apiKey': {
      const key = apiKeyFrom(rule, request);
      if (key === undefined) return { failure: 'missing' };
      const project = tenancy.projectByApiKey(key);
      return project ? { caller: { project } } : { failure: 'invalid' };
    }
    case 'basic': {
      const [word, encoded] = (request.headers.get('authorization') ?? '').split(/\s+/, 2);
      if (word?.toLowerCase() !== 'basic' || !encoded) return { failure: 'missing' };
      const decoded = Buffer.from(encoded, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 1) return { failure: 'missing' };
      const project = tenancy.projectByCredentials(decoded.slice(0, colon), decoded.slice(colon + 1));
      return project ? { caller: { project } } : { failure: 'invalid' };
    }
    case 'deploymentKey': {
      const [word, key] = (request.headers.get('authorization') ?? '').split(/\s+/, 2);
      if (word?.toLowerCase() !== 'api-key' || !key) return { failure: 'missing' };
      const deployment = tenancy.deploymentByKey(key);
      const project = deployment && tenancy.projectOf(deployment.app_id);
      return deployment && project ? { caller: { deployment, project } } : { failure: 'invalid' };
    }
  }
}
