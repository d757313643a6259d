// One call per operation for the SDK tests against the mock, with arguments taken from the
// specs' examples: every parameter that has an example (a required one without is an error),
// the request body's example, and what the answer must be (status, model name).
import { HTTP_METHODS, deref, isRef } from './view.mjs';

const isJsonType = (type) => /^application\/(.+\+)?json\b/.test(type ?? '');

function exampleOf(doc, holder, schema) {
  if (holder && 'example' in holder) return { value: holder.example };
  const first = Object.values(holder?.examples ?? {})[0];
  if (first) return { value: deref(doc, first).value };
  const s = deref(doc, schema);
  if (s && 'example' in s) return { value: s.example };
  if (s && 'default' in s) return { value: s.default };
  if (s?.enum) return { value: s.enum[0] };
  return undefined;
}

/** `{ model }` for a named schema, `{ listOf }` / `{ mapOf }` for an array / a map of one, `{ untyped: true }` otherwise. */
function responseType(schema) {
  if (isRef(schema)) return { model: schema.$ref.split('/').pop() };
  if (schema?.type === 'array' && isRef(schema.items)) return { listOf: schema.items.$ref.split('/').pop() };
  if (schema?.type === 'object' && isRef(schema.additionalProperties)) return { mapOf: schema.additionalProperties.$ref.split('/').pop() };
  return { untyped: true };
}

/**
 * How a group's requests carry credentials: `authorization`, the scheme of the Authorization
 * header (`basic`, `api-key` or null); `inRequest`, `METHOD path` → `{ in: 'body' | 'form',
 * name }` for the operations that carry the API key in the request itself; `queryKey`,
 * `METHOD path` → the query parameter of the operations that take it in the query.
 */
export function groupCredentials(view) {
  const schemes = Object.values(view.components?.securitySchemes ?? {});
  const authorization = schemes.some((s) => s.type === 'http' && s.scheme === 'basic')
    ? 'basic'
    : schemes.some((s) => s.type === 'apiKey' && s.in === 'header' && s.name === 'Authorization')
      ? 'api-key'
      : null;
  const inRequest = {};
  // Operations whose security takes the API key as a query parameter (an apiKey scheme in the
  // query other than the secret key's): `METHOD path` → the parameter's name.
  const queryKey = {};
  const byName = view.components?.securitySchemes ?? {};
  for (const [path, item] of Object.entries(view.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const querySchemes = (op.security ?? view.security ?? [])
        .flatMap((requirement) => Object.keys(requirement))
        .map((name) => byName[name])
        .filter((scheme) => scheme?.type === 'apiKey' && scheme.in === 'query' && !/secret/i.test(scheme.name));
      if (querySchemes.length) queryKey[`${method.toUpperCase()} ${path}`] = querySchemes[0].name;
      if (!op.requestBody) continue;
      const type = Object.keys(op.requestBody.content)[0];
      const where = isJsonType(type) ? 'body' : 'form';
      const credential = (op['x-svc-credentials'] ?? []).find((c) => c.in === where);
      if (credential) inRequest[`${method.toUpperCase()} ${path}`] = { in: where, name: credential.name };
    }
  }
  return { authorization, inRequest, queryKey };
}

export function operationCalls(api, bundle, view) {
  const calls = [];
  for (const [path, item] of Object.entries(view.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const where = `${api.name} ${op.operationId}`;
      const params = [];
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
        const param = deref(view, p);
        const example = exampleOf(view, param, param.schema);
        if (!example) {
          if (param.required) throw new Error(`${where}: required parameter ${param.name} has no example`);
          continue;
        }
        params.push({ name: param.name, in: param.in, value: example.value });
      }
      let body;
      if (op.requestBody) {
        const [mediaType, media] = Object.entries(op.requestBody.content)[0];
        const original = deref(bundle, bundle.paths[path][method].requestBody).content[mediaType];
        const example = exampleOf(bundle, original, original.schema);
        if (!example) throw new Error(`${where}: request body ${mediaType} has no example`);
        if (isJsonType(mediaType)) body = { mediaType, value: example.value, ...responseType(media.schema) };
        else {
          const schema = deref(view, media.schema);
          const fields = Object.entries(example.value).map(([name, value]) => ({
            name,
            value: schema.properties?.[name]?.['x-svc-json-text'] && typeof value !== 'string' ? JSON.stringify(value) : value,
          }));
          body = { mediaType, fields };
        }
      }
      const statuses = Object.keys(op.responses).filter((s) => /^2\d\d$/.test(s)).sort();
      if (!statuses.length) throw new Error(`${where}: no 2xx response`);
      const response = deref(view, op.responses[statuses[0]]);
      const [type, media] = Object.entries(response.content ?? {})[0] ?? [];
      calls.push({
        api: api.name,
        // The mock serves an operation with servers of its own on the first one's host role.
        hostRole: api.operationServers?.[op.operationId]?.[0]?.hostRole ?? api.hostRole,
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        params,
        ...(body && { body }),
        status: Number(statuses[0]),
        response: type && isJsonType(type) ? responseType(media.schema) : { mediaType: type ?? null },
      });
    }
  }
  const missing = api.operations.filter((id) => !calls.some((c) => c.operationId === id));
  if (missing.length) throw new Error(`${api.name}: no call for ${missing.join(', ')}`);
  return calls;
}
