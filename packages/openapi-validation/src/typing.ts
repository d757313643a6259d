// How the generated TypeScript types see parameters that travel as JSON text: the client
// serializes them and the server's validator parses them, so both handle the decoded value.
import { HTTP_METHODS, deref, type Doc } from './specs.js';

export const isJsonMedia = (mediaType: string): boolean => /^application\/(.+\+)?json$/.test(mediaType.split(';')[0]!.trim());

/**
 * The JSON pointer of an array parameter's `x-svc-json-items` (the schema each item's JSON text
 * satisfies: OpenAPI 3.0 cannot repeat a `content` parameter), or undefined without one. Only
 * exploded form style can carry JSON items: joined with commas or spaces they could not be told
 * apart again. Throws, naming `where`, when the extension is misused.
 */
export function jsonItemsPointer(doc: Doc, param: Doc, where: string): string | undefined {
  const pointer = param['x-svc-json-items'] as unknown;
  if (pointer === undefined) return undefined;
  let schema: unknown;
  try {
    schema = typeof pointer === 'string' ? deref(doc, { $ref: pointer }) : undefined;
  } catch {
    schema = undefined;
  }
  if (!schema) throw new Error(`${where}: x-svc-json-items ${JSON.stringify(pointer)} does not point at a schema of the bundle`);
  if (deref<Doc | undefined>(doc, param.schema)?.type !== 'array' || (param.style ?? 'form') !== 'form' || param.explode === false) {
    throw new Error(`${where}: x-svc-json-items needs an array parameter in exploded form style`);
  }
  return pointer as string;
}

/** What the rewritten parameters' descriptions say about the value. */
export interface JsonParameterNotes {
  value: string;
  items: string;
}

const DEFAULT_NOTES: JsonParameterNotes = {
  value: 'Sent as JSON text; the decoded value is typed here.',
  items: 'Each item is sent as JSON text; the decoded values are typed here.',
};

/**
 * openapi-typescript types a parameter described by `content` as `string`, and a JSON-items
 * array (`x-svc-json-items`) as `string[]`. In a copy of the bundle, each JSON `content`
 * parameter is rewritten to a `schema` parameter, and each JSON-items array gets the items
 * schema its extension points at, so that the types show the decoded values.
 */
export function typeJsonParametersBySchema(doc: Doc, notes: JsonParameterNotes = DEFAULT_NOTES): Doc {
  const copy = structuredClone(doc);
  const rewrite = (param: Doc | undefined) => {
    if (!param || param.$ref) return;
    const itemsPointer = jsonItemsPointer(copy, param, `parameter ${param.name}`);
    if (itemsPointer) {
      param.schema = { ...deref<Doc>(copy, param.schema), items: { $ref: itemsPointer } };
      if (Array.isArray(param.example)) param.example = param.example.map((item: string) => JSON.parse(item));
      param.description = `${param.description ?? ''}\n\n${notes.items}`.trim();
      return;
    }
    if (!param.content) return;
    const [mediaType, media] = (Object.entries(param.content)[0] ?? []) as [string?, Doc?];
    if (!mediaType || !media || !isJsonMedia(mediaType) || !media.schema) return;
    param.schema = media.schema;
    delete param.content;
    param.description = `${param.description ?? ''}\n\n${notes.value}`.trim();
  };
  for (const param of Object.values(copy.components?.parameters ?? {})) rewrite(param as Doc);
  for (const item of Object.values(copy.paths ?? {}) as Doc[]) {
    for (const param of item.parameters ?? []) rewrite(param);
    for (const method of HTTP_METHODS) for (const param of item[method]?.parameters ?? []) rewrite(param);
  }
  return copy;
}
