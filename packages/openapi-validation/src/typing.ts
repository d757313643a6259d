import { HTTP_METHODS, type Doc } from './specs.js';

const isJsonMedia = (mediaType: string) => /^application\/(.+\+)?json$/.test(mediaType.split(';')[0]!.trim());

/**
 * openapi-typescript types a parameter described by `content` as `string`. The client
 * serializes such parameters and the server parses them, so both handle the value: for the
 * types, each JSON `content` parameter of a copy of the bundle is rewritten to a `schema`
 * parameter.
 */
export function typeJsonParametersBySchema(doc: Doc): Doc {
  const copy = structuredClone(doc);
  const rewrite = (param: Doc | undefined) => {
    if (!param || param.$ref || !param.content) return;
    const [mediaType, media] = (Object.entries(param.content)[0] ?? []) as [string?, Doc?];
    if (!mediaType || !media || !isJsonMedia(mediaType) || !media.schema) return;
    param.schema = media.schema;
    delete param.content;
    param.description = `${param.description ?? ''}\n\nSent as JSON text; the value is typed here.`.trim();
  };
  for (const param of Object.values(copy.components?.parameters ?? {})) rewrite(param as Doc);
  for (const item of Object.values(copy.paths ?? {}) as Doc[]) {
    for (const param of item.parameters ?? []) rewrite(param);
    for (const method of HTTP_METHODS) for (const param of item[method]?.parameters ?? []) rewrite(param);
  }
  return copy;
}
