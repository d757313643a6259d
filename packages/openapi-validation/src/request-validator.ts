// A small spec-driven request validator: checks a request against the bundle's operation
// the way the spec describes it, including what Prism does not check:
//
// - parameters (path, query, header): required ones present; `schema` parameters are
//   deserialized (form style, explode) and coerced to their primitive type; `content:
//   application/json` parameters are JSON-parsed and validated against their schema, and so
//   is each item of an array parameter with `x-svc-json-items` (against the schema it names);
//   `x-svc-query-schema` of the operation (rules between parameters, e.g. "`start` is
//   required when `time_period` is `CUSTOM`") is checked on the object of the decoded
//   `schema` query parameters;
// - request body: required when `requestBody.required`; JSON bodies parsed (also those of a
//   media type with `x-svc-body-format: json`, such as the `text/plain` of beacons); form bodies
//   (urlencoded) split into fields, fields with `encoding.<field>.contentType:
//   application/json` JSON-parsed, other fields coerced; then Ajv on the body schema;
// - credentials: the operation's `security` (HTTP Basic needs `Basic base64(user:pass)`,
//   bearer `Bearer <token>`, apiKey schemes a non-empty value) and `x-svc-credentials`
//   (the key must be in one of the listed places: body, form or query).
//
// Values of credentials are not checked here: the contract tests have no real keys, and the
// server checks them against its tenancy after this validation (`where: 'credentials'`).
import { nulProblems } from './nul-text.js';
import type { ErrorObject } from 'ajv';
import { jsonValueFlaw } from './json-value.js';
import { formatErrors, validatorFor } from './schema.js';
import { type Doc, type OperationRef, deref, matchOperation } from './specs.js';

export interface RawRequest {
  method: string;
  /** Path with query string, e.g. `/v1/vardata?user_id=a`. */
  url: string;
  headers?: Record<string, string>;
  /** Raw body text as sent. */
  body?: string;
}

export interface RequestProblem {
  /** `body`, `form body`, `form field <name>`, `<in> parameter <name>` or `credentials`. */
  where: string;
  message: string;
  /** Ajv's errors when a schema rejected the value (instance paths relative to it). */
  errors?: ErrorObject[];
}

export interface RequestValidation {
  valid: boolean;
  operation: string;
  problems: RequestProblem[];
}

/** A request already split by an HTTP server: path parameters matched, body still text. */
export interface SplitRequest {
  query: URLSearchParams;
  /** Header names in lower case. */
  headers: Map<string, string>;
  pathParams: Record<string, string>;
  body?: string;
  /**
   * The body parsed already (`parseJson`), used when the operation reads it as JSON: a
   * server can parse a large body and validate it in different turns of its event loop.
   */
  json?: ParsedJson;
}

/** The outcome of validating a split request, with the values it parsed. */
export interface ParsedRequest {
  problems: RequestProblem[];
  /** Parameters by `<in>:<name>`, deserialized (JSON-parsed for `content` parameters). */
  params: Map<string, unknown>;
  /** The parsed body: JSON value or form fields (JSON-encoded fields parsed). */
  body: unknown;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;


/** Type of a (possibly referenced) schema, for coercing text values. */
function schemaType(doc: Doc, schema: unknown): string | undefined {
  const s = deref<Doc>(doc, schema);
  if (!s) return undefined;
  if (typeof s.type === 'string') return s.type;
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    for (const sub of (s[key] as unknown[] | undefined) ?? []) {
      const t = schemaType(doc, sub);
      if (t) return t;
    }
  }
  return undefined;
}

function coerce(doc: Doc, schema: unknown, raw: string): unknown {
  switch (schemaType(doc, schema)) {
    case 'integer':
    case 'number':
      return raw.trim() !== '' && !Number.isNaN(Number(raw)) ? Number(raw) : raw;
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : raw;
    default:
      return raw;
  }
}

/** Deserializes the text values of a `schema` parameter or form field. */
function deserialize(doc: Doc, schema: unknown, values: string[], explode: boolean): unknown {
  const s = deref<Doc>(doc, schema);
  if (schemaType(doc, s) === 'array') {
    const parts = explode ? values : values.flatMap((v) => (v === '' ? [] : v.split(',')));
    return parts.map((p) => coerce(doc, s?.items, p));
  }
  return coerce(doc, s, values[values.length - 1]!);
}

/** A flawed value (`errors` set) is still returned: the request's credentials can be read from it. */
export type ParsedJson = { ok: true; value: unknown } | { ok: false; error: string; errors?: ErrorObject[]; value?: unknown };

/** Whether a body of this `content-type` (header value) is JSON. */
export const isJsonContentType = (contentType: string) => JSON_TYPE.test(contentType.split(';')[0]!.trim());

/** JSON text → value; text that parses to a value no store can keep as sent is refused too (see json-value.ts). */
export function parseJson(text: string): ParsedJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
  const flaw = jsonValueFlaw(value, text);
  if (!flaw) return { ok: true, value };
  const { instancePath, message } = flaw;
  return { ok: false, error: `${instancePath || '/'} ${message}`, errors: [{ keyword: 'svcJsonValue', instancePath, schemaPath: '', params: {}, message }], value };
}

const jsonProblem = (where: string, parsed: Extract<ParsedJson, { ok: false }>): RequestProblem =>
  parsed.errors
    ? { where, message: `is not acceptable JSON: ${parsed.error}`, errors: parsed.errors }
    : { where, message: `is not valid JSON (${parsed.error})` };

export function validateRequest(request: RawRequest): RequestValidation {
  const url = new URL(request.url, 'http://spec.invalid');
  const { ref, pathParams } = matchOperation(request.method, url.pathname);
  const headers = new Map(Object.entries(request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const { problems } = parseOperationRequest(ref, { query: url.searchParams, headers, pathParams, body: request.body });
  return { valid: problems.length === 0, operation: `${ref.op.operationId} (${ref.bundle.name})`, problems };
}

/** The operation's parameters by `<in>:<name>`: operation-level ones override path-level ones of the same name and place. */
function operationParameters({ bundle, op, pathItem }: OperationRef): Map<string, Doc> {
  const params = new Map<string, Doc>();
  for (const p of [...((pathItem.parameters as unknown[]) ?? []), ...((op.parameters as unknown[]) ?? [])]) {
    const param = deref<Doc>(bundle.doc, p);
    params.set(`${param.in}:${param.name}`, param);
  }
  return params;
}

/**
 * Compiles the validator of every schema `parseOperationRequest` checks for this operation.
 * A server calls it for each operation before it listens: compiled at the first request, one
 * schema held the event loop for up to ~50 ms (the event schema of `/2/httpapi`), every
 * operation's first request for 60-100 ms.
 */
export function compileOperation(ref: OperationRef): void {
  const { bundle, op } = ref;
  const validator = validatorFor(bundle.name, bundle.doc);
  const schemas: unknown[] = [];
  for (const param of operationParameters(ref).values()) {
    if (param.content) schemas.push(...Object.values(param.content as Doc).map((media: Doc) => media.schema));
    else schemas.push(param.schema);
    if (typeof param['x-svc-json-items'] === 'string') schemas.push({ $ref: param['x-svc-json-items'] });
  }
  if (op['x-svc-query-schema']) schemas.push(op['x-svc-query-schema']);
  const requestBody = op.requestBody ? deref<Doc>(bundle.doc, op.requestBody) : undefined;
  for (const media of Object.values((requestBody?.content ?? {}) as Doc)) schemas.push((media as Doc).schema);
  for (const schema of schemas) if (schema !== undefined) validator.compile(schema);
}

/** Parses and validates one request against its operation (see the top of this file). */
export function parseOperationRequest(ref: OperationRef, request: SplitRequest): ParsedRequest {
  const { bundle, op } = ref;
  const doc = bundle.doc;
  const validator = validatorFor(bundle.name, doc);
  const { headers, pathParams, query } = request;
  const problems: RequestProblem[] = [];
  const parsedParams = new Map<string, unknown>();
  const check = (where: string, schema: unknown, value: unknown) => {
    const { valid, errors } = validator.validate(schema, value);
    if (!valid) problems.push({ where, message: formatErrors(errors), errors });
    return valid;
  };
  const params = operationParameters(ref);
  const decodedQuery: Record<string, unknown> = {};
  for (const param of params.values()) {
    const where = `${param.in} parameter ${param.name}`;
    let values: string[] = [];
    if (param.in === 'query') values = query.getAll(param.name);
    else if (param.in === 'header') values = headers.has(param.name.toLowerCase()) ? [headers.get(param.name.toLowerCase())!] : [];
    else if (param.in === 'path') values = param.name in pathParams ? [pathParams[param.name]!] : [];
    else continue; // cookies: none in these specs
    if (values.length === 0) {
      if (param.required) problems.push({ where, message: 'is required' });
      continue;
    }
    if (param.content) {
      const [mediaType, media] = Object.entries(param.content as Doc)[0] as [string, Doc];
      if (JSON_TYPE.test(mediaType)) {
        const parsed = parseJson(values[values.length - 1]!);
        if (!parsed.ok) problems.push(jsonProblem(where, parsed));
        else if (check(where, media.schema, parsed.value)) parsedParams.set(`${param.in}:${param.name}`, parsed.value);
      } else if (check(where, media.schema, values[values.length - 1])) parsedParams.set(`${param.in}:${param.name}`, values[values.length - 1]);
    } else {
      const explode = param.explode ?? (param.style ?? (param.in === 'query' ? 'form' : 'simple')) === 'form';
      const value = deserialize(doc, param.schema, values, explode);
      if (check(where, param.schema, value)) parsedParams.set(`${param.in}:${param.name}`, value);
      if (param.in === 'query') decodedQuery[param.name] = value;
      const itemsPointer = param['x-svc-json-items'];
      if (typeof itemsPointer === 'string') {
        // An array of JSON texts, one per repetition (OpenAPI 3.0 cannot repeat a `content`
        // parameter): each item is parsed and checked against the schema the extension names.
        const items = values.map((text, index) => {
          const parsed = parseJson(text);
          if (!parsed.ok) problems.push(jsonProblem(`${where} item ${index}`, parsed));
          else check(`${where} item ${index}`, { $ref: itemsPointer }, parsed.value);
          return parsed.ok ? parsed.value : undefined;
        });
        parsedParams.set(`${param.in}:${param.name}`, items);
      }
    }
  }

  if (op['x-svc-query-schema']) check('query parameters (x-svc-query-schema)', op['x-svc-query-schema'], decodedQuery);

  // Request body.
  const requestBody = op.requestBody ? deref<Doc>(doc, op.requestBody) : undefined;
  let bodyObject: Record<string, unknown> | undefined;
  let parsedBody: unknown;
  const hasBody = request.body !== undefined && request.body !== '';
  if (requestBody) {
    if (!hasBody) {
      if (requestBody.required) problems.push({ where: 'body', message: 'is required' });
    } else {
      const contentType = (headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      const media = (requestBody.content as Doc)[contentType] as Doc | undefined;
      if (!media) {
        problems.push({ where: 'body', message: `content type ${contentType || '(none)'} is not one of ${Object.keys(requestBody.content).join(', ')}` });
      } else if (JSON_TYPE.test(contentType) || media['x-svc-body-format'] === 'json') {
        const parsed = request.json ?? parseJson(request.body!);
        if (!parsed.ok) {
          problems.push(jsonProblem('body', parsed));
          parsedBody = parsed.value;
          if (parsed.value && typeof parsed.value === 'object') bodyObject = parsed.value as Record<string, unknown>;
        } else {
          parsedBody = parsed.value;
          check('body', media.schema, parsed.value);
          if (parsed.value && typeof parsed.value === 'object') bodyObject = parsed.value as Record<string, unknown>;
        }
      } else if (contentType === 'application/x-www-form-urlencoded') {
        const form = new URLSearchParams(request.body!);
        const schema = deref<Doc>(doc, media.schema) ?? {};
        const encoding = (media.encoding ?? {}) as Doc;
        const fields: Record<string, unknown> = {};
        for (const name of new Set(form.keys())) {
          const values = form.getAll(name);
          const fieldSchema = (schema.properties as Doc | undefined)?.[name];
          const enc = encoding[name] as Doc | undefined;
          if (enc?.contentType && JSON_TYPE.test(enc.contentType)) {
            const parsed = parseJson(values[values.length - 1]!);
            if (!parsed.ok) {
              problems.push(jsonProblem(`form field ${name}`, parsed));
              continue;
            }
            fields[name] = parsed.value;
          } else {
            fields[name] = fieldSchema ? deserialize(doc, fieldSchema, values, enc?.explode ?? true) : values[values.length - 1];
          }
        }
        check('form body', media.schema, fields);
        bodyObject = fields;
        parsedBody = fields;
      } else {
        problems.push({ where: 'body', message: `the validator does not handle ${contentType}` });
      }
    }
  }

  if (doc['x-svc-nul-text'] === 'refused') problems.push(...nulProblems(parsedParams, parsedBody));

  // Credentials: security requirements (OR of ANDs; `{}` means "none needed") ...
  const security = (op.security ?? doc.security ?? []) as Record<string, string[]>[];
  const schemes = (doc.components?.securitySchemes ?? {}) as Doc;
  const satisfied = (name: string): boolean => {
    const scheme = deref<Doc>(doc, schemes[name]);
    if (!scheme) return false;
    if (scheme.type === 'apiKey') {
      const value =
        scheme.in === 'query' ? query.get(scheme.name) : scheme.in === 'header' ? headers.get(scheme.name.toLowerCase()) : undefined;
      return typeof value === 'string' && value.length > 0;
    }
    if (scheme.type === 'http') {
      const auth = headers.get('authorization') ?? '';
      const [word, credentials = ''] = auth.split(/\s+/, 2);
      if (word?.toLowerCase() !== String(scheme.scheme).toLowerCase() || credentials === '') return false;
      if (String(scheme.scheme).toLowerCase() === 'basic') {
        const decoded = Buffer.from(credentials, 'base64').toString('utf8');
        return /^[^:]+:.+$/.test(decoded);
      }
      return true;
    }
    return false; // oauth2/openIdConnect: none in these specs
  };
  if (security.length > 0 && !security.some((req) => Object.keys(req).every(satisfied))) {
    problems.push({
      where: 'credentials',
      message: `none of the security requirements is met (${security.map((r) => Object.keys(r).join('+') || '{}').join(' | ')})`,
    });
  }
  // ... and x-svc-credentials: the key must travel in one of the listed places.
  const credentials = op['x-svc-credentials'] as { in: string; name: string }[] | undefined;
  if (credentials?.length) {
    const present = credentials.some(({ in: where, name }) => {
      if (where === 'query') return (query.get(name) ?? '') !== '';
      if (where === 'header') return (headers.get(name.toLowerCase()) ?? '') !== '';
      if (where === 'body' || where === 'form') {
        const value = bodyObject?.[name];
        return typeof value === 'string' && value.length > 0;
      }
      return false;
    });
    if (!present) {
      problems.push({
        where: 'credentials',
        message: `x-svc-credentials: ${credentials.map((c) => `${c.in} ${c.name}`).join(' or ')} is missing`,
      });
    }
  }

  return { problems, params: parsedParams, body: parsedBody };
}

export function describeProblems(result: RequestValidation): string {
  return result.problems.map((p) => `${p.where}: ${p.message}`).join('\n');
}

/**
 * Problems of a response against its operation's documented responses (status documented,
 * a JSON body valid against the status's schema, another body of a documented media type);
 * empty when it conforms. `body` is the parsed JSON, or the text of another media type.
 */
export function validateResponse(method: string, url: string, status: number, body: unknown, contentType = 'application/json'): string[] {
  const { ref } = matchOperation(method, new URL(url, 'http://spec.invalid').pathname);
  const responses = (ref.op.responses ?? {}) as Doc;
  const documented = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
  if (!documented) return [`status ${status} is not documented for ${ref.op.operationId}`];
  const response = deref<Doc>(ref.bundle.doc, documented);
  const empty = body === undefined || body === '';
  if (!isJsonContentType(contentType)) {
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    return empty || (response.content as Doc | undefined)?.[mediaType] ? [] : [`status ${status} of ${ref.op.operationId} documents no ${mediaType} body`];
  }
  const media = (response.content as Doc | undefined)?.['application/json'] as Doc | undefined;
  if (!media) return empty ? [] : [`status ${status} of ${ref.op.operationId} documents no JSON body`];
  const { valid, errors } = validatorFor(ref.bundle.name, ref.bundle.doc).validate(media.schema, body);
  return valid ? [] : [`${ref.op.operationId} ${status}: ${formatErrors(errors)}`];
}
