// Requests from generated values (arbitraries.ts): serialized the way the spec says
// (parameter styles, JSON `content` and `x-svc-json-items` parameters, JSON, form and
// `x-svc-body-format: json` bodies), with the operation's credentials, and broken in one way
// when a mutation is given. Each request prints as a curl line that replays it.
import { type Doc, type OperationRef, deref } from '@svc/openapi-validation';
import fc from 'fast-check';

export interface Keys {
  apiKey: string;
  secretKey: string;
  deploymentKey: string;
}

export interface FuzzRequest {
  operation: string;
  method: string;
  /** Path and query. */
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  /** What was broken on purpose; undefined for a request meant to be valid. */
  mutation?: string;
}

export const SIMPLE_MUTATIONS = ['no credentials', 'wrong credentials', 'malformed JSON', 'missing required field', 'wrong types', 'wrong content type', 'oversized strings', 'garbage parameters'] as const;

export type Mutation = { kind: (typeof SIMPLE_MUTATIONS)[number] } | { kind: 'non-UTF-8 body'; bytes: Uint8Array<ArrayBuffer> } | { kind: 'long header'; value: string };

export interface RequestValues {
  params: { param: Doc; value: unknown }[];
  body?: { contentType: string; media: Doc; value: unknown };
  mutation?: Mutation;
}

const RAW = '\u0000raw:';
/** JSON text with bigints as their digits and -0 as `-0` (JSON.stringify throws on the first and writes `0` for the second). */
export const toJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${RAW}${v}` : Object.is(v, -0) ? `${RAW}-0` : v)).replace(/"\\u0000raw:(-?\d+)"/g, '$1');

const scalarText = (value: unknown) => (typeof value === 'string' ? value : Object.is(value, -0) ? '-0' : typeof value === 'bigint' ? String(value) : toJson(value));

interface Parts {
  path: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  body?: { contentType: string; fields: Record<string, unknown>; encode: (fields: Record<string, unknown>) => string };
}

function serialize(values: RequestValues): Parts {
  const result: Parts = { path: {}, query: [], headers: {} };
  for (const { param, value } of values.params) {
    let texts: string[];
    if (param.content) texts = [toJson(value)];
    else if (param['x-svc-json-items']) texts = (value as unknown[]).map(toJson);
    else {
      const explode = param.explode ?? (param.style ?? (param.in === 'query' ? 'form' : 'simple')) === 'form';
      texts = Array.isArray(value) ? (explode ? value.map(scalarText) : [value.map(scalarText).join(',')]) : [scalarText(value)];
    }
    if (param.in === 'path') result.path[param.name] = texts[0] ?? '';
    // fetch sends header values of visible ASCII only (the bytes beyond are the mutations' job).
    else if (param.in === 'header') result.headers[param.name] = (texts[0] ?? '').replace(/[^\x20-\x7e]/g, '?');
    else if (param.in === 'query') for (const text of texts) result.query.push([param.name, text]);
  }
  if (values.body) {
    const { contentType, media, value } = values.body;
    const fields = value as Record<string, unknown>;
    if (contentType === 'application/x-www-form-urlencoded') {
      const encoding = (media.encoding ?? {}) as Doc;
      const encode = (f: Record<string, unknown>) =>
        new URLSearchParams(
          Object.entries(f).flatMap(([name, v]) => {
            const enc = encoding[name] as Doc | undefined;
            if (enc?.contentType === 'application/json') return [[name, toJson(v)]];
            if (Array.isArray(v)) return enc?.explode === false ? [[name, v.map(scalarText).join(',')]] : v.map((item) => [name, scalarText(item)]);
            return [[name, scalarText(v)]];
          }),
        ).toString();
      result.body = { contentType, fields, encode };
    } else {
      result.body = { contentType, fields, encode: toJson };
    }
  }
  return result;
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Puts the operation's credentials where it takes them. */
function withCredentials(ref: OperationRef, request: Parts, keys: Keys): void {
  const places = (ref.op['x-svc-credentials'] as { in: string; name: string }[] | undefined) ?? [];
  if (places.length > 0) {
    const inBody = places.find((p) => (p.in === 'body' || p.in === 'form') && isRecord(request.body?.fields));
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

/** A curl command that sends `request` (bytes that are not printable as \xHH through printf). */
export function curl(request: FuzzRequest, baseUrl: string): string {
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  // A long run of one character (the long-header mutation) as a shell expansion that makes it.
  const value = (v: string) => (/^(.)\1*$/s.test(v) ? `"$(printf '%${v.length}s' | tr ' ' ${quote(v[0]!)})"` : quote(v));
  const headers = Object.entries(request.headers).map(([k, v]) => ` -H ${v.length > 200 ? `${quote(`${k}: `)}${value(v)}` : quote(`${k}: ${v}`)}`);
  const head = `curl -sS -X ${request.method} ${quote(`${baseUrl}${request.url}`)}${headers.join('')}`;
  if (request.body === undefined) return head;
  if (typeof request.body === 'string') return `${head} --data-binary ${quote(request.body)}`;
  const escaped = [...request.body].map((byte) => (byte >= 0x20 && byte < 0x7f && byte !== 0x25 && byte !== 0x5c && byte !== 0x27 ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`)).join('');
  return `printf '${escaped}' | ${head} --data-binary @-`;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function assemble(ref: OperationRef, request: Parts, baseUrl: string, mutation?: string): FuzzRequest {
  // Lone surrogates have no UTF-8 form: sent as U+FFFD, as URLSearchParams does in the query.
  const path = ref.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent((request.path[name] ?? '').replace(LONE_SURROGATE, '\ufffd')));
  const query = new URLSearchParams(request.query).toString();
  const headers = { ...request.headers, ...(request.body ? { 'content-type': request.body.contentType } : {}) };
  const built: FuzzRequest = {
    operation: ref.op.operationId as string,
    method: ref.method.toUpperCase(),
    url: `${path}${query ? `?${query}` : ''}`,
    headers,
    body: request.body ? request.body.encode(request.body.fields) : undefined,
    mutation,
  };
  // fast-check prints a counterexample with this: the curl line that replays it.
  return Object.defineProperty(built, fc.toStringMethod, { value: () => curl(built, baseUrl), enumerable: false });
}

/** The request of `values` against the server at `baseUrl`, broken as `values.mutation` says. */
export function buildRequest(ref: OperationRef, values: RequestValues, keys: Keys, baseUrl: string): FuzzRequest {
  const request = serialize(values);
  const mutation = values.mutation;
  if (!mutation) {
    withCredentials(ref, request, keys);
    return assemble(ref, request, baseUrl);
  }
  const done = (changed: Partial<FuzzRequest> = {}) => {
    const built = assemble(ref, request, baseUrl, mutation.kind);
    return Object.assign(built, changed);
  };
  if (mutation.kind === 'no credentials') return done();
  if (mutation.kind === 'wrong credentials') {
    withCredentials(ref, request, { apiKey: 'wrong-key', secretKey: 'wrong-secret', deploymentKey: 'server-wrong' });
    return done();
  }
  withCredentials(ref, request, keys);
  const fields = isRecord(request.body?.fields) ? request.body.fields : undefined;
  const contentType = request.body?.contentType ?? 'application/json';
  switch (mutation.kind) {
    case 'malformed JSON': {
      const built = done();
      if (built.body !== undefined) return Object.assign(built, { body: `${String(built.body).slice(0, Math.max(1, built.body.length - 3))}{,"` });
      return Object.assign(built, { url: `${built.url}${built.url.includes('?') ? '&' : '?'}e=%7Bnot-json&context=%5B` });
    }
    case 'missing required field':
      if (fields) delete fields[Object.keys(fields).find((k) => k !== 'api_key') ?? ''];
      else request.query.shift();
      return done();
    case 'wrong types':
      if (fields) for (const key of Object.keys(fields).filter((k) => k !== 'api_key')) fields[key] = typeof fields[key] === 'string' ? 12345 : 'text';
      request.query = request.query.map(([name, value]) => [name, /^\d+$/.test(value) ? `x${value}` : '12345']);
      return done();
    case 'wrong content type': {
      const built = done();
      return Object.assign(built, { headers: { ...built.headers, 'content-type': 'application/xml' }, body: built.body === undefined ? undefined : `<x>${String(built.body)}</x>` });
    }
    case 'oversized strings':
      if (fields) for (const key of Object.keys(fields).filter((k) => k !== 'api_key')) if (typeof fields[key] === 'string') fields[key] = 'x'.repeat(100_000);
      request.query = request.query.map(([name, value]) => [name, name === 'api_key' || name === 'secret_key' ? value : `${value}${'y'.repeat(3_000)}`]);
      return done();
    case 'garbage parameters':
      for (const name of Object.keys(request.path)) request.path[name] = '../%00';
      request.query.push(['unexpected', '\u0000\ud800'], ['__proto__', '{"x":1}']);
      return done();
    case 'non-UTF-8 body':
      return done({ body: mutation.bytes, headers: { ...done().headers, 'content-type': contentType } });
    case 'long header':
      return done({ headers: { ...done().headers, 'x-fuzz-padding': mutation.value } });
  }
}
