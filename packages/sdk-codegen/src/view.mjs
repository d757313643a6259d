// The codegen view of a bundle: the same API with the constructs that openapi-generator
// 5.0.0-beta2 mis-reads rewritten into ones it reads correctly. Every rewrite is recorded as
// { at, kind, cost } where `cost` says what the SDK user loses; README.md sums them up.
export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'];
const isJsonType = (type) => /^application\/(.+\+)?json\b/.test(type ?? '');
export const isRef = (node) => typeof node?.$ref === 'string';
const refName = (ref) => decodeURIComponent(ref.split('/').pop());
export const pascal = (s) => s.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_, __, c) => c.toUpperCase());

export const COSTS = {
  'either-or': 'the rule that at least one of these alternatives is present is not checked by the SDK (the server answers 400)',
  'allOf-flattened': 'the composed model is standalone: it is not a subtype of its parts',
  'object-union-merged': 'one model with the properties of every alternative, all optional unless every alternative requires them; which alternative is meant is not checked by the SDK',
  'scalar-union-string': 'typed as a plain string: the known values of the union are not offered as an enum',
  'scalar-union-number': 'typed as a plain number',
  'union-untyped': 'untyped (Python: any JSON value; Go: interface{}); the caller builds and reads the shape',
  'not-dropped': 'the exclusion rule (`not`) is not checked by the SDK',
  'single-allOf-ref': 'none: the property takes the referenced type (its local description moves to the docs of that type)',
  'map-alias-inlined': 'no named type for the map: a plain dict / map of its value type',
  'json-form-field-as-text': 'the form field is a string: the caller passes the JSON text (json.dumps / json.Marshal)',
  'json-parameter-as-text': 'the parameter is a string: the caller passes the JSON text (json.dumps / json.Marshal)',
  'operation-servers-dropped': "the operation is sent to the document's servers; its other hosts (e.g. the api host for /attribution) need an explicit base URL",
  'credential-field-optional': 'none with a client made by the SDK helpers (they fill the key in); without them a missing key is reported by the server (400), not by the SDK',
  'boolean-enum-dropped': 'the constant (e.g. `success: true`) is a plain boolean: the SDK does not check it',
  'credential-parameter-dropped': 'none: the key is sent by the security scheme of the same name (the client configuration), not as an argument',
  'item-pattern-dropped': "the pattern of the list's items is not checked by the SDK (the server answers 400)",
  'additional-properties-true-dropped': 'none for free-form maps (still any JSON object); models with listed properties keep only those: members not in the spec are not kept by the SDK (the server ignores them)',
  'open-object-as-map': 'a free-form map: every member is kept, the listed ones have no typed fields (read them by key)',
  'number-as-double': 'none: a number is a double (the go generator reads a number without format as float32)',
  'media-type-dropped': 'the operation is offered with one request media type only',
  'shadowing-query-dropped': 'the value is sent as the form field only, never as the query parameter of the same name',
  'inline-schema-named': 'none: the inline schema gets a stable model name',
};

export function resolvePointer(doc, ref) {
  if (!ref.startsWith('#/')) throw new Error(`external $ref ${ref} in a bundle`);
  return ref
    .slice(2)
    .split('/')
    .map((p) => decodeURIComponent(p.replace(/~1/g, '/').replace(/~0/g, '~')))
    .reduce((node, key) => node?.[key], doc);
}

export function deref(doc, node) {
  const seen = new Set();
  while (isRef(node) && !seen.has(node.$ref)) {
    seen.add(node.$ref);
    node = resolvePointer(doc, node.$ref);
  }
  return node;
}

/** Keys whose values are data (examples) or extensions, never schemas to rewrite. */
const skipKey = (key) => key === 'example' || key === 'examples' || key.startsWith('x-');

export function codegenView(bundle) {
  const doc = structuredClone(bundle);
  const changes = [];
  const note = (at, kind) => changes.push({ at, kind, cost: COSTS[kind] });
  const schemas = (doc.components ??= {}).schemas ??= {};

  simplifyCompositions(doc, schemas, note);
  inlineMapAliases(doc, schemas, note);
  adaptOperations(doc, schemas, note);
  markPageParameters(doc);
  return { doc, changes };
}

/**
 * The query parameters a listing's `x-svc-pagination` names get `x-svc-page-parameter` (the page
 * token or offset) and `x-svc-page-limit` (the page size), on a copy of their own: the templates
 * find them among the operation's parameters to use the generator's names (`pageToken`,
 * `PageToken`) and defaults, which a name in the extension cannot give them. Not a rewrite: no cost.
 */
function markPageParameters(doc) {
  for (const item of Object.values(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      const pagination = op?.['x-svc-pagination'];
      if (!pagination || !op.parameters) continue;
      op.parameters = op.parameters.map((p) => {
        const param = deref(doc, p);
        if (param.in !== 'query') return p;
        if (param.name === pagination.parameter) return { ...structuredClone(param), 'x-svc-page-parameter': true };
        if (param.name === pagination.limit) return { ...structuredClone(param), 'x-svc-page-limit': true };
        return p;
      });
    }
  }
}

const objectLike = (s) => s && (s.type === 'object' || (s.type === undefined && (s.properties || s.required)));

function mergeObjects(parts, requiredOf) {
  const properties = {};
  for (const part of parts) {
    for (const [name, prop] of Object.entries(part.properties ?? {})) if (!(name in properties)) properties[name] = prop;
  }
  const merged = { type: 'object', properties };
  const required = requiredOf(parts.map((p) => p.required ?? []));
  if (required.length) merged.required = required;
  const extra = parts.find((p) => p.additionalProperties !== undefined);
  if (extra) merged.additionalProperties = extra.additionalProperties;
  return merged;
}

const union = (lists) => [...new Set(lists.flat())];
const intersection = (lists) => lists.reduce((acc, l) => acc.filter((x) => l.includes(x)));

/**
 * allOf → one object; anyOf/oneOf of objects → one object (the either/or rules dropped);
 * anyOf/oneOf of scalars → the common scalar type or untyped; `not` dropped. Components are
 * simplified before their users so that a $ref member is read in its simplified form.
 */
function simplifyCompositions(doc, schemas, note) {
  const done = new Set();
  const member = (m) => {
    if (isRef(m) && m.$ref.startsWith('#/components/schemas/')) ensure(refName(m.$ref));
    return deref(doc, m);
  };
  const ensure = (name) => {
    if (done.has(name)) return;
    done.add(name);
    schemas[name] = simplify(schemas[name], `components.schemas.${name}`);
  };
  const simplify = (node, at) => {
    if (!node || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map((n, i) => simplify(n, `${at}[${i}]`));
    for (const key of Object.keys(node)) {
      if (!skipKey(key)) node[key] = simplify(node[key], `${at}.${key}`);
    }
    if (node.not !== undefined && (node.type !== undefined || node.properties || node.anyOf || node.oneOf || node.allOf)) {
      delete node.not;
      note(at, 'not-dropped');
    }
    // `additionalProperties: true` is OpenAPI 3.0's default; written out, the go generator types a
    // free-form map as map[string]map[string]interface{} and gives a model an UnmarshalJSON that
    // swallows decoding errors (the whole object then reads as empty). A named model keeps its
    // listed properties; an open object nested in another becomes a free-form map.
    if (node.additionalProperties === true) {
      delete node.additionalProperties;
      if (node.properties && !/^components\.schemas\.[^.]+$/.test(at)) {
        // An open object inside another (e.g. merged metadata): a map keeps every member.
        delete node.properties;
        delete node.required;
        note(at, 'open-object-as-map');
      } else {
        note(at, 'additional-properties-true-dropped');
      }
    }
    if (node.type === 'number' && !node.format) {
      // The go generator reads a number without format as float32 (7 significant digits).
      node.format = 'double';
      note(at, 'number-as-double');
    }
    if (node.type === 'boolean' && node.enum) {
      delete node.enum;
      note(at, 'boolean-enum-dropped');
    }
    if (node.allOf) {
      const { allOf, ...rest } = node;
      if (allOf.length === 1 && isRef(allOf[0]) && !rest.properties && !rest.required) {
        note(at, 'single-allOf-ref');
        node = { $ref: allOf[0].$ref };
      } else {
        note(at, 'allOf-flattened');
        const merged = mergeObjects([rest, ...allOf.map(member)], union);
        node = { ...rest, ...merged };
      }
    }
    for (const key of ['anyOf', 'oneOf']) {
      if (!node[key]) continue;
      const { [key]: alternatives, discriminator, ...rest } = node;
      const members = alternatives.map(member);
      const types = new Set(members.map((m) => m.type));
      if (members.every(objectLike)) {
        // Alternatives that only state which properties are required: an either/or rule.
        const onlyRequired = alternatives.every(
          (a) => !isRef(a) && a.required && Object.keys(a.properties ?? {}).every((p) => a.required.includes(p)),
        );
        note(at, onlyRequired ? 'either-or' : 'object-union-merged');
        const merged = mergeObjects(members, intersection);
        const own = rest.properties ?? {};
        node = { ...rest, type: 'object', properties: { ...merged.properties, ...own } };
        const required = union([rest.required ?? [], merged.required ?? []]);
        if (required.length) node.required = required;
        else delete node.required;
      } else if (types.size === 1 && types.has('string')) {
        note(at, 'scalar-union-string');
        node = { ...rest, type: 'string' };
      } else if ([...types].every((t) => t === 'integer' || t === 'number')) {
        note(at, 'scalar-union-number');
        node = { ...rest, type: types.has('number') ? 'number' : 'integer' };
      } else {
        note(at, 'union-untyped');
        node = { ...rest };
        delete node.type;
      }
    }
    return node;
  };
  for (const name of Object.keys(schemas)) ensure(name);
  for (const key of Object.keys(doc)) {
    if (key !== 'components' && !skipKey(key)) doc[key] = simplify(doc[key], key);
  }
  for (const key of Object.keys(doc.components)) {
    if (key !== 'schemas' && key !== 'examples') doc.components[key] = simplify(doc.components[key], `components.${key}`);
  }
}

/** Components that only name a map (`type: object` without properties) are inlined where used. */
function inlineMapAliases(doc, schemas, note) {
  const aliases = new Map();
  for (const [name, s] of Object.entries(schemas)) {
    if (s.type === 'object' && !s.properties) aliases.set(`#/components/schemas/${name}`, name);
  }
  const replace = (node, at) => {
    if (!node || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map((n, i) => replace(n, `${at}[${i}]`));
    if (isRef(node) && aliases.has(node.$ref)) {
      note(at, 'map-alias-inlined');
      return replace(structuredClone(schemas[aliases.get(node.$ref)]), at);
    }
    for (const key of Object.keys(node)) if (!skipKey(key)) node[key] = replace(node[key], `${at}.${key}`);
    return node;
  };
  for (const key of Object.keys(doc)) if (!skipKey(key)) doc[key] = replace(doc[key], key);
  for (const name of aliases.values()) delete schemas[name];
}

/**
 * Per operation: one request media type (JSON first), JSON-in-form fields as text, query
 * parameters that shadow a form field dropped, the body parameter named `body`, and inline
 * object schemas of bodies named after the operation.
 */
function adaptOperations(doc, schemas, note) {
  const nameInline = (media, name, at) => {
    const schema = media?.schema;
    // Maps stay inline: a named map is what the generators mis-read (see inlineMapAliases).
    if (!schema || isRef(schema) || !objectLike(schema) || !schema.properties) return;
    let unique = name;
    for (let i = 2; unique in schemas; i++) unique = `${name}${i}`;
    schemas[unique] = schema;
    media.schema = { $ref: `#/components/schemas/${unique}` };
    note(at, 'inline-schema-named');
  };
  for (const [name, response] of Object.entries(doc.components.responses ?? {})) {
    for (const [type, media] of Object.entries(response.content ?? {})) {
      if (isJsonType(type)) nameInline(media, `${name}Body`, `components.responses.${name}`);
    }
  }
  // Parameters with `content` (JSON text in the query): a string parameter with the example as text.
  const textParam = (param, at) => {
    if (isRef(param) || !param.content) return param;
    const [type, media] = Object.entries(param.content)[0];
    if (!isJsonType(type)) return param;
    const { content, ...rest } = param;
    note(at, 'json-parameter-as-text');
    const example = media.example ?? deref(doc, Object.values(media.examples ?? {})[0])?.value;
    return {
      ...rest,
      schema: { type: 'string', 'x-svc-json-text': true },
      ...(example !== undefined && { example: JSON.stringify(example) }),
    };
  };
  // The generators apply the pattern of a list parameter's items to the whole list.
  const dropItemPattern = (schema, at) => {
    const list = deref(doc, schema);
    if (list?.type !== 'array' || !deref(doc, list.items)?.pattern) return schema;
    const copy = { ...structuredClone(list), items: structuredClone(deref(doc, list.items)) };
    delete copy.items.pattern;
    note(at, 'item-pattern-dropped');
    return copy;
  };
  for (const [name, original] of Object.entries(doc.components.parameters ?? {})) {
    const param = textParam(original, `components.parameters.${name}`);
    doc.components.parameters[name] = param;
    param.schema = dropItemPattern(param.schema, `components.parameters.${name}`);
  }
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (item.parameters) item.parameters = item.parameters.map((p, i) => textParam(p, `paths.${path}.parameters[${i}]`));
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const at = `paths.${path}.${method}`;
      if (op.parameters) op.parameters = op.parameters.map((p, i) => textParam(p, `${at}.parameters[${i}]`));
      for (const p of op.parameters ?? []) if (!isRef(p)) p.schema = dropItemPattern(p.schema, `${at}.parameters.${p.name}`);
      // A query parameter that is also the operation's apiKey scheme would be sent twice.
      const schemes = doc.components.securitySchemes ?? {};
      const keyParams = new Set(
        (op.security ?? doc.security ?? [])
          .flatMap((requirement) => Object.keys(requirement))
          .map((name) => schemes[name])
          .filter((scheme) => scheme?.type === 'apiKey' && scheme.in === 'query')
          .map((scheme) => scheme.name),
      );
      if (op.parameters && keyParams.size) {
        op.parameters = op.parameters.filter((p) => {
          const param = deref(doc, p);
          const credential = param.in === 'query' && keyParams.has(param.name);
          if (credential) note(`${at}.parameters.${param.name}`, 'credential-parameter-dropped');
          return !credential;
        });
      }
      const Op = pascal(op.operationId);
      // The generators write operation servers' URL templates without filling in their variables.
      if (op.servers) {
        delete op.servers;
        note(`${at}.servers`, 'operation-servers-dropped');
      }
      if (op.requestBody) {
        if (isRef(op.requestBody)) op.requestBody = structuredClone(deref(doc, op.requestBody));
        const types = Object.keys(op.requestBody.content);
        const keep = types.find(isJsonType) ?? types[0];
        if (types.length > 1) {
          op.requestBody.content = { [keep]: op.requestBody.content[keep] };
          note(`${at}.requestBody`, 'media-type-dropped');
        }
        const media = op.requestBody.content[keep];
        const where = FORM_TYPES.includes(keep) ? 'form' : 'body';
        const credentials = (op['x-svc-credentials'] ?? []).filter((c) => c.in === where).map((c) => c.name);
        if (credentials.length) {
          const schema = deref(doc, media.schema);
          if (schema.required?.some((r) => credentials.includes(r))) {
            schema.required = schema.required.filter((r) => !credentials.includes(r));
            if (!schema.required.length) delete schema.required;
            note(`${at}.requestBody`, 'credential-field-optional');
          }
        }
        if (FORM_TYPES.includes(keep)) {
          const form = structuredClone(deref(doc, media.schema));
          for (const [field, enc] of Object.entries(media.encoding ?? {})) {
            if (!isJsonType(enc.contentType) || !form.properties?.[field]) continue;
            form.properties[field] = {
              type: 'string',
              description: `${field}: JSON text (see the API reference for its shape).`,
              'x-svc-json-text': true,
            };
            note(`${at}.requestBody.${field}`, 'json-form-field-as-text');
          }
          delete media.encoding;
          media.schema = form;
          for (const [field, schema] of Object.entries(form.properties ?? {})) {
            form.properties[field] = dropItemPattern(schema, `${at}.requestBody.${field}`);
          }
          const fields = Object.keys(form.properties ?? {});
          const params = op.parameters ?? [];
          op.parameters = params.filter((p) => {
            const param = deref(doc, p);
            const shadows = param.in === 'query' && fields.includes(param.name);
            if (shadows) note(`${at}.parameters.${param.name}`, 'shadowing-query-dropped');
            return !shadows;
          });
        } else {
          op['x-codegen-request-body-name'] = 'body';
          nameInline(media, `${Op}Request`, `${at}.requestBody`);
        }
      }
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (isRef(response)) continue;
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (isJsonType(type)) nameInline(media, `${Op}Response${status === '200' ? '' : status}`, `${at}.responses.${status}`);
        }
      }
    }
  }
}
