// Requests generated from an operation of the bundles: values from its schemas (json-schema-
// faker, seeded), serialized the way the spec says (parameter styles, JSON `content` and
// `x-svc-json-items` parameters, JSON, form and `x-svc-body-format: json` bodies), with the
// operation's credentials; and invalid variants of them.
import { type Doc, type OperationRef, deref, resolvePointer, toJsonSchema } from '@svc/openapi-validation';
import { generateSync } from 'json-schema-faker';

export interface Keys {
  apiKey: string;
  secretKey: string;
  deploymentKey: string;
}

export interface FuzzRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** What was broken on purpose; undefined for a request meant to be valid. */
  mutation?: string;
}

const MAX_REF_DEPTH = 6;

/** The schema with the bundle's `#/components/...` refs inlined (recursive ones cut off), as JSON Schema. */
function concrete(doc: Doc, schema: unknown, depth = 0): unknown {
  if (Array.isArray(schema)) return schema.map((s) => concrete(doc, s, depth));
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as Doc;
  if (typeof node.$ref === 'string') return depth >= MAX_REF_DEPTH ? {} : concrete(doc, resolvePointer(doc, node.$ref), depth + 1);
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, key === 'example' || key === 'examples' ? value : concrete(doc, value, depth)]));
}

function generate(doc: Doc, schema: unknown, seed: number): unknown {
  const jsonSchema = toJsonSchema(concrete(doc, schema), '') as Record<string, unknown>;
  // Small arrays and strings: the limits themselves are the mutations' and the abuse tests' job.
  return generateSync(jsonSchema as never, { seed, maxDepth: 4, maxDefaultItems: 3, maxItems: 4, maxLength: 48, optionalsProbability: 0.5 });
}

const scalarText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

interface Parts {
  path: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  body?: { contentType: string; fields: Record<string, unknown>; encode: (fields: Record<string, unknown>) => string };
}

/** The operation's parameters and body, generated and serialized. */
function parts(ref: OperationRef, seed: number): Parts {
  const doc = ref.bundle.doc;
  const result: Parts = { path: {}, query: [], headers: {} };
  const params = [...((ref.pathItem.parameters as unknown[]) ?? []), ...((ref.op.parameters as unknown[]) ?? [])].map((p) => deref<Doc>(doc, p));
  params.forEach((param, index) => {
    const required = param.required === true || param.in === 'path';
    // Optional parameters half of the time.
    if (!required && (seed + index) % 2 === 0) return;
    const itemsPointer = param['x-svc-json-items'] as string | undefined;
    let values: string[];
    if (param.content) {
      const media = Object.values(param.content as Doc)[0] as Doc;
      values = [JSON.stringify(generate(doc, media.schema, seed + index))];
    } else if (itemsPointer) {
      const count = 2 + ((seed + index) % 2);
      values = Array.from({ length: count }, (_, i) => JSON.stringify(generate(doc, { $ref: itemsPointer }, seed + index * 31 + i)));
    } else {
      const value = generate(doc, param.schema, seed + index);
      const explode = param.explode ?? (param.style ?? (param.in === 'query' ? 'form' : 'simple')) === 'form';
      values = Array.isArray(value) ? (explode ? value.map(scalarText) : [value.map(scalarText).join(',')]) : [scalarText(value)];
    }
    if (param.in === 'path') result.path[param.name] = values[0]!;
    else if (param.in === 'header') result.headers[param.name] = values[0]!;
    else if (param.in === 'query') for (const value of values) result.query.push([param.name, value]);
  });
  const requestBody = ref.op.requestBody ? deref<Doc>(doc, ref.op.requestBody) : undefined;
  if (requestBody) {
    const [contentType, media] = Object.entries(requestBody.content as Doc)[seed % Object.keys(requestBody.content).length] as [string, Doc];
    const fields = generate(doc, media.schema, seed + 101) as Record<string, unknown>;
    if (contentType === 'application/x-www-form-urlencoded') {
      const encoding = (media.encoding ?? {}) as Doc;
      const encode = (f: Record<string, unknown>) =>
        new URLSearchParams(
          Object.entries(f).flatMap(([name, value]) => {
            const enc = encoding[name] as Doc | undefined;
            if (enc?.contentType === 'application/json') return [[name, JSON.stringify(value)]];
            if (Array.isArray(value)) return enc?.explode === false ? [[name, value.map(scalarText).join(',')]] : value.map((v) => [name, scalarText(v)]);
            return [[name, scalarText(value)]];
          }),
        ).toString();
      result.body = { contentType, fields, encode };
    } else {
      result.body = { contentType, fields, encode: (f) => JSON.stringify(f) };
    }
  }
  return result;
}

/** Puts the operation's credentials where it takes them. */
function withCredentials(ref: OperationRef, request: Parts, keys: Keys): void {
  const places = (ref.op['x-svc-credentials'] as { in: string; name: string }[] | undefined) ?? [];
  if (places.length > 0) {
    const inBody = places.find((p) => (p.in === 'body' || p.in === 'form') && request.body && typeof request.body.fields === 'object' && request.body.fields !== null && !Array.isArray(request.body.fields));
    if (inBody) request.body!.fields[inBody.name] = keys.apiKey;
    else request.query.push([places.find((p) => p.in === 'query')?.name ?? 'api_key', keys.apiKey]);
    return;
  }
  const doc = ref.bundle.doc;
  for (const requirement of (ref.op.security ?? doc.security ?? []) as Record<string, string[]>[]) {
    const schemes = Object.keys(requirement).map((name) => deref<Doc>(doc, doc.components?.securitySchemes?.[name]));
    if (schemes[0]?.type === 'http') {
      request.headers.authorization =
        String(schemes[0].scheme).toLowerCase() === 'bearer' ? `Bearer ${keys.apiKey}` : `Basic ${Buffer.from(`${keys.apiKey}:${keys.secretKey}`).toString('base64')}`;
      return;
    }
    if (schemes[0]?.type === 'apiKey' && schemes[0].in === 'header') {
      request.headers.authorization = `Api-Key ${keys.deploymentKey}`;
      return;
    }
  }
}

function assemble(ref: OperationRef, request: Parts, mutation?: string): FuzzRequest {
  const path = ref.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(request.path[name] ?? ''));
  const query = new URLSearchParams(request.query).toString();
  const headers = { ...request.headers, ...(request.body ? { 'content-type': request.body.contentType } : {}) };
  return { method: ref.method.toUpperCase(), url: `${path}${query ? `?${query}` : ''}`, headers, body: request.body ? request.body.encode(request.body.fields) : undefined, mutation };
}

export function validRequest(ref: OperationRef, keys: Keys, seed: number): FuzzRequest {
  const request = parts(ref, seed);
  withCredentials(ref, request, keys);
  return assemble(ref, request);
}

const MUTATIONS = ['no credentials', 'wrong credentials', 'malformed JSON', 'missing required field', 'wrong types', 'wrong content type', 'oversized strings', 'garbage parameters'] as const;

/** A request broken in one way (chosen by the seed); the server must answer it as documented. */
export function invalidRequest(ref: OperationRef, keys: Keys, seed: number): FuzzRequest {
  const mutation = MUTATIONS[seed % MUTATIONS.length]!;
  const request = parts(ref, seed);
  const bodyFields = request.body && request.body.fields !== null && typeof request.body.fields === 'object' && !Array.isArray(request.body.fields) ? request.body.fields : undefined;
  switch (mutation) {
    case 'no credentials':
      return assemble(ref, request, mutation);
    case 'wrong credentials':
      withCredentials(ref, request, { apiKey: `wrong-${seed}`, secretKey: `wrong-${seed}`, deploymentKey: `server-wrong-${seed}` });
      return assemble(ref, request, mutation);
    case 'malformed JSON': {
      withCredentials(ref, request, keys);
      const built = assemble(ref, request, mutation);
      if (built.body !== undefined) return { ...built, body: `${built.body.slice(0, Math.max(1, built.body.length - 3))}{,"` };
      return { ...built, url: `${built.url}${built.url.includes('?') ? '&' : '?'}e=%7Bnot-json&context=%5B` };
    }
    case 'missing required field': {
      withCredentials(ref, request, keys);
      const [first] = request.query;
      if (bodyFields) for (const key of Object.keys(bodyFields).filter((k) => k !== 'api_key').slice(0, 1)) delete bodyFields[key];
      else if (first) request.query.shift();
      return assemble(ref, request, mutation);
    }
    case 'wrong types': {
      withCredentials(ref, request, keys);
      if (bodyFields) for (const key of Object.keys(bodyFields).filter((k) => k !== 'api_key')) bodyFields[key] = typeof bodyFields[key] === 'string' ? seed : `text-${seed}`;
      request.query = request.query.map(([name, value]) => [name, /^\d+$/.test(value) ? `x${value}` : `${seed}`]);
      return assemble(ref, request, mutation);
    }
    case 'wrong content type': {
      withCredentials(ref, request, keys);
      const built = assemble(ref, request, mutation);
      return built.body === undefined ? { ...built, headers: { ...built.headers, 'content-type': 'application/xml' } } : { ...built, headers: { ...built.headers, 'content-type': 'application/xml' }, body: `<x>${built.body}</x>` };
    }
    case 'oversized strings': {
      withCredentials(ref, request, keys);
      if (bodyFields) for (const key of Object.keys(bodyFields).filter((k) => k !== 'api_key')) if (typeof bodyFields[key] === 'string') bodyFields[key] = 'x'.repeat(100_000);
      request.query = request.query.map(([name, value]) => [name, name === 'api_key' || name === 'secret_key' ? value : `${value}${'y'.repeat(5_000)}`]);
      return assemble(ref, request, mutation);
    }
    case 'garbage parameters': {
      withCredentials(ref, request, keys);
      for (const name of Object.keys(request.path)) request.path[name] = `../%00${seed}`;
      request.query.push(['unexpected', '\u0000\ud800'], ['__proto__', '{"x":1}']);
      return assemble(ref, request, mutation);
    }
  }
}
