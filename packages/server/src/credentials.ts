// Which credentials an operation takes, read from its spec (`security` and
// `x-svc-credentials`), and how a request's credentials resolve to a caller.
import type { Doc, OperationRef } from '@svc/openapi-validation';
import { deref } from '@svc/openapi-validation';
import type { Caller } from './handlers.js';
import type { Tenancy } from './tenancy.js';

export type CredentialKind = 'none' | 'apiKey' | 'basic' | 'deploymentKey';

export interface CredentialRule {
  kind: CredentialKind;
  /** For `apiKey`: where the key may travel (`body`/`form` field or `query` parameter). */
  places: { in: string; name: string }[];
}

export function credentialRule(ref: OperationRef): CredentialRule {
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

export type CredentialCheck = { caller: Caller } | { failure: 'missing' | 'invalid' };

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
