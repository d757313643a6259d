// Finds every example of a bundle together with the schema it must satisfy.
import { type Bundle, type Doc, HTTP_METHODS } from '@svc/openapi-validation';

export interface ExampleCase {
  /** Where the example is written, e.g. `paths./batch.post.requestBody.content.application/json.examples.x`. */
  location: string;
  value: unknown;
  /** The schema it must satisfy (as written in the bundle; may be a `$ref`). */
  schema: unknown;
}

export interface ComponentExampleUse {
  location: string;
  schema: unknown;
}

export interface CollectedExamples {
  /** Inline examples: media-type `example`/`examples`, parameter/header examples, schema `example`. */
  inline: ExampleCase[];
  /** components.examples.<name> → its value and every place that uses it (with that place's schema). */
  components: Map<string, { value: unknown; uses: ComponentExampleUse[] }>;
}

const isRef = (node: unknown): node is { $ref: string } =>
  typeof node === 'object' && node !== null && typeof (node as Doc).$ref === 'string';

export function collectExamples(bundle: Bundle): CollectedExamples {
  const doc = bundle.doc;
  const inline: ExampleCase[] = [];
  const components = new Map<string, { value: unknown; uses: ComponentExampleUse[] }>();
  for (const [name, example] of Object.entries((doc.components?.examples ?? {}) as Doc)) {
    if (isRef(example)) continue;
    components.set(name, { value: (example as Doc).value, uses: [] });
  }

  const examplesMap = (loc: string, examples: Doc | undefined, schema: unknown) => {
    for (const [key, example] of Object.entries(examples ?? {})) {
      if (isRef(example)) {
        const m = /^#\/components\/examples\/(.+)$/.exec(example.$ref);
        const target = m && components.get(decodeURIComponent(m[1]!));
        if (!target) throw new Error(`${loc}.examples.${key}: $ref ${example.$ref} does not name a component example`);
        target.uses.push({ location: `${loc}.examples.${key}`, schema });
      } else if ((example as Doc).externalValue === undefined) {
        inline.push({ location: `${loc}.examples.${key}`, value: (example as Doc).value, schema });
      }
    }
  };

  const walkSchema = (loc: string, schema: unknown) => {
    if (!schema || typeof schema !== 'object' || isRef(schema)) return;
    const s = schema as Doc;
    if ('example' in s) inline.push({ location: `${loc}.example`, value: s.example, schema: s });
    for (const key of ['properties', 'patternProperties'] as const) {
      for (const [prop, sub] of Object.entries((s[key] ?? {}) as Doc)) walkSchema(`${loc}.${key}.${prop}`, sub);
    }
    for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
      (s[key] as unknown[] | undefined)?.forEach((sub, i) => walkSchema(`${loc}.${key}[${i}]`, sub));
    }
    for (const key of ['items', 'not', 'additionalProperties'] as const) {
      if (s[key] && typeof s[key] === 'object') walkSchema(`${loc}.${key}`, s[key]);
    }
  };

  const walkMediaTypes = (loc: string, content: Doc | undefined) => {
    for (const [mediaType, media] of Object.entries(content ?? {}) as [string, Doc][]) {
      const at = `${loc}.content.${mediaType}`;
      walkSchema(`${at}.schema`, media.schema);
      if ('example' in media) inline.push({ location: `${at}.example`, value: media.example, schema: media.schema });
      examplesMap(at, media.examples, media.schema);
    }
  };

  // Parameters and headers: a schema (with example/examples beside it) or a content map.
  const walkParameter = (loc: string, param: Doc) => {
    if (isRef(param)) return;
    if (param.schema) {
      walkSchema(`${loc}.schema`, param.schema);
      if ('example' in param) inline.push({ location: `${loc}.example`, value: param.example, schema: param.schema });
      examplesMap(loc, param.examples, param.schema);
    }
    walkMediaTypes(loc, param.content);
  };

  const walkResponse = (loc: string, response: Doc) => {
    if (isRef(response)) return;
    for (const [name, header] of Object.entries((response.headers ?? {}) as Doc)) walkParameter(`${loc}.headers.${name}`, header);
    walkMediaTypes(loc, response.content);
  };

  for (const [path, item] of Object.entries((doc.paths ?? {}) as Doc)) {
    (item.parameters as Doc[] | undefined)?.forEach((p, i) => walkParameter(`paths.${path}.parameters[${i}]`, p));
    for (const method of HTTP_METHODS) {
      const op = item[method] as Doc | undefined;
      if (!op) continue;
      const at = `paths.${path}.${method}`;
      (op.parameters as Doc[] | undefined)?.forEach((p, i) => walkParameter(`${at}.parameters[${i}]`, p));
      if (op.requestBody && !isRef(op.requestBody)) walkMediaTypes(`${at}.requestBody`, op.requestBody.content);
      for (const [status, response] of Object.entries((op.responses ?? {}) as Doc)) walkResponse(`${at}.responses.${status}`, response);
    }
  }
  const c = (doc.components ?? {}) as Doc;
  for (const [name, schema] of Object.entries((c.schemas ?? {}) as Doc)) walkSchema(`components.schemas.${name}`, schema);
  for (const [name, param] of Object.entries((c.parameters ?? {}) as Doc)) walkParameter(`components.parameters.${name}`, param);
  for (const [name, header] of Object.entries((c.headers ?? {}) as Doc)) walkParameter(`components.headers.${name}`, header);
  for (const [name, body] of Object.entries((c.requestBodies ?? {}) as Doc)) {
    if (!isRef(body)) walkMediaTypes(`components.requestBodies.${name}`, body.content);
  }
  for (const [name, response] of Object.entries((c.responses ?? {}) as Doc)) walkResponse(`components.responses.${name}`, response);
  return { inline, components };
}
