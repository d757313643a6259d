// Adaptations of the merged document for Prism, applied only to the mock's copy
// (packages/mock/dist/<role>.json), never to the specs.
//
// Form fields that carry JSON (`encoding.<field>.contentType: application/json`): Prism
// 5.14 does not JSON-parse them; it validates the raw text against the field's object
// schema and therefore answers 400 to every *valid* request. The mock's copy declares
// such a field as a non-empty string instead, so valid requests get the success example.
// The price is that Prism no longer checks the JSON inside the field; the contract tests'
// spec-driven request validator (test/contract/support/) checks it against the original
// schema, and test/contract/PRISM_GAPS.md lists the consequences.
import { resolvePointer } from './merge.mjs';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'];
const isJson = (type) => /^application\/(.+\+)?json\b/.test(type ?? '');

function deref(doc, node) {
  const seen = new Set();
  while (node && node.$ref && !seen.has(node.$ref)) {
    seen.add(node.$ref);
    node = resolvePointer(doc, node.$ref);
  }
  return node;
}

/** Rewrites JSON-in-form fields to strings (in place); returns what was changed. */
export function adaptForPrism(doc) {
  const changes = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      const body = deref(doc, op?.requestBody);
      if (!body?.content) continue;
      for (const [mediaType, media] of Object.entries(body.content)) {
        if (!FORM_TYPES.includes(mediaType.split(';')[0].trim()) || !media.encoding || !media.schema) continue;
        const jsonFields = Object.entries(media.encoding)
          .filter(([, enc]) => isJson(enc.contentType))
          .map(([field]) => field);
        if (jsonFields.length === 0) continue;
        // Inline a copy of the form schema so that shared components stay untouched.
        const schema = structuredClone(deref(doc, media.schema));
        for (const field of jsonFields) {
          if (!schema.properties?.[field]) continue;
          schema.properties[field] = {
            type: 'string',
            minLength: 1,
            description: `${field}: JSON text. The mock (Prism) does not check its content; see packages/mock/README.md.`,
            'x-svc-mock-json-field': true,
          };
          changes.push({ operation: `${method.toUpperCase()} ${path}`, mediaType, field });
        }
        media.schema = schema;
      }
    }
  }
  return changes;
}
