// JSON bodies that carry `code` carry the HTTP status in it: in every example and in a
// `code` enum of the schema.
const collectCodeEnums = (schema, found = []) => {
  if (!schema || typeof schema !== 'object') return found;
  if (schema.properties?.code?.enum) found.push(schema.properties.code.enum);
  for (const key of ['allOf', 'anyOf', 'oneOf']) (schema[key] ?? []).forEach((s) => collectCodeEnums(s, found));
  return found;
};

export default function errorCodeMatchesStatus(response, _options, context) {
  const status = Number(context.path[context.path.length - 1]);
  if (!Number.isInteger(status)) return [];
  const problems = [];
  for (const [type, media] of Object.entries(response?.content ?? {})) {
    if (!/json/.test(type)) continue;
    const examples = [
      ...(media.example !== undefined ? [['example', media.example]] : []),
      ...Object.entries(media.examples ?? {}).map(([name, example]) => [`examples.${name}`, example?.value]),
    ];
    for (const [where, value] of examples) {
      if (value && typeof value === 'object' && 'code' in value && value.code !== status) {
        problems.push({ message: `${type} ${where} has code ${value.code} in a ${status} response.` });
      }
    }
    for (const values of collectCodeEnums(media.schema)) {
      if (values.length !== 1 || values[0] !== status) {
        problems.push({ message: `${type} schema allows code ${JSON.stringify(values)} in a ${status} response.` });
      }
    }
  }
  return problems;
}
