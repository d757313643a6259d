import {
  mergeHeaders,
  serializeArrayParam,
  serializeObjectParam,
  serializePrimitiveParam,
  type HeadersOptions,
} from 'openapi-fetch';
import type { ArrayStyle, OperationRule } from './rule-types.js';

const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/**
 * A query serializer for one operation: parameters with `content: application/json` are sent as
 * JSON text, JSON-items arrays once per item as JSON text (`e={…}&e={…}`), array parameters with
 * their declared style (`flag_keys` → `a,b`), everything else as openapi-fetch does by default.
 * `extra` entries (injected credentials) are appended.
 */
export function createOperationQuerySerializer(
  rule: OperationRule['query'],
  extra: Record<string, string> = {},
): (query: Record<string, unknown>) => string {
  return (query) => {
    const parts: string[] = [];
    const all: Record<string, unknown> = { ...(query ?? {}), ...extra };
    for (const [name, value] of Object.entries(all)) {
      if (value === undefined || value === null) continue;
      if (rule.json.includes(name)) {
        parts.push(jsonQueryPart(name, value));
        continue;
      }
      if (rule.jsonItems.includes(name)) {
        for (const item of Array.isArray(value) ? value : [value]) parts.push(jsonQueryPart(name, item));
        continue;
      }
      if (Array.isArray(value)) {
        if (value.length === 0) continue;
        const style = rule.arrays[name] ?? { style: 'form', explode: true };
        parts.push(
          serializeArrayParam(name, value, {
            style: style.style as 'form' | 'spaceDelimited' | 'pipeDelimited',
            explode: style.explode,
          }),
        );
        continue;
      }
      if (typeof value === 'object') {
        parts.push(serializeObjectParam(name, value as Record<string, unknown>, { style: 'deepObject', explode: true }));
        continue;
      }
      parts.push(serializePrimitiveParam(name, String(value)));
    }
    return parts.join('&');
  };
}

/** The separator of each non-exploded array style (`explode: false`). */
const ARRAY_DELIMITERS: Record<string, string> = { form: ',', spaceDelimited: ' ', pipeDelimited: '|' };

function jsonQueryPart(name: string, value: unknown): string {
  return `${encodeURIComponent(name)}=${encodeURIComponent(JSON.stringify(value))}`;
}

/**
 * Form-encodes a body: fields the spec declares as JSON (`encoding.<field>.contentType:
 * application/json`) are JSON.stringify'd, arrays declared `explode: false` are joined into one
 * value (`tags=a,b` for style form), other arrays repeat the field, other objects are sent as
 * JSON text too (the specs declare no other object encoding), primitives as strings.
 */
export function encodeForm(
  body: Record<string, unknown>,
  jsonFields: readonly string[],
  arrays: Readonly<Record<string, ArrayStyle>> = {},
): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    const arrayStyle = arrays[name];
    const delimiter = arrayStyle?.explode === false ? ARRAY_DELIMITERS[arrayStyle.style] : undefined;
    if (jsonFields.includes(name)) form.append(name, JSON.stringify(value));
    else if (Array.isArray(value) && delimiter !== undefined) form.append(name, value.map(String).join(delimiter));
    else if (Array.isArray(value)) for (const item of value) form.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item));
    else if (typeof value === 'object') form.append(name, JSON.stringify(value));
    else form.append(name, String(value));
  }
  return form.toString();
}

function contentTypeOf(headers: HeadersOptions | undefined): string | undefined {
  return mergeHeaders(headers).get('content-type') ?? undefined;
}

/** Per-request fetch options openapi-fetch accepts and this module may set. */
export interface PreparableInit {
  body?: unknown;
  headers?: HeadersOptions;
  params?: { query?: Record<string, unknown>; [key: string]: unknown };
  bodySerializer?: (body: never, headers?: Headers) => unknown;
  querySerializer?: unknown;
  parseAs?: string;
  [key: string]: unknown;
}

/**
 * Adds what an operation's rule asks for to a request's options: the query serializer, the form
 * or JSON body serializer, how to read the success body (`parseAs: 'text'` for text/* answers
 * such as CSV), and the API key in the first place of `x-svc-credentials` that the request can
 * carry (`body` for a JSON body, `form` for a form body, `query` always).
 * Options the caller passes explicitly win over these.
 */
export function prepareInit(rule: OperationRule, init: PreparableInit | undefined, apiKey: string | undefined): PreparableInit {
  const next: PreparableInit = { ...(init ?? {}) };
  const hasBody = next.body !== undefined;
  const callerType = contentTypeOf(next.headers);
  const usesForm =
    hasBody && rule.form !== null && (!rule.jsonBody || (callerType?.startsWith(FORM_MEDIA_TYPE) ?? false));
  const usesJson = hasBody && !usesForm && rule.jsonBody;

  let keyIn: 'body' | 'form' | 'query' | undefined;
  let keyName = 'api_key';
  if (apiKey !== undefined) {
    for (const location of rule.credentials) {
      if ((location.in === 'body' && usesJson) || (location.in === 'form' && usesForm) || location.in === 'query') {
        keyIn = location.in;
        keyName = location.name;
        break;
      }
    }
  }
  const extraQuery: Record<string, string> = keyIn === 'query' && apiKey !== undefined ? { [keyName]: apiKey } : {};

  const defaults: PreparableInit = {
    querySerializer: createOperationQuerySerializer(rule.query, extraQuery),
    ...(rule.parseAs === 'json' ? {} : { parseAs: rule.parseAs }),
  };
  if (usesForm && rule.form) {
    const { jsonFields, arrays } = rule.form;
    defaults.bodySerializer = (body: never) =>
      encodeForm(keyIn === 'form' ? { [keyName]: apiKey, ...(body as object) } : (body as Record<string, unknown>), jsonFields, arrays);
    next.headers = mergeHeaders({ 'Content-Type': rule.form.mediaType }, next.headers);
  } else if (usesJson && keyIn === 'body') {
    defaults.bodySerializer = (body: never) => JSON.stringify({ [keyName]: apiKey, ...(body as object) });
  }
  return { ...defaults, ...next };
}

/** `Authorization: Basic base64(user:password)`, UTF-8 safe. */
export function basicAuthorization(user: string, password: string): string {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

/** Length in bytes of a string encoded as UTF-8, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
