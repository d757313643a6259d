// Integers a client sends (parameters, request bodies) are bounded: `format: int32` or `int64`
// (the validator holds int64 to ±(2^53 − 1), what a JSON number carries exactly), a `maximum`
// or an `enum`. An unbounded one reaches storage as a number no column holds.
const BOUNDED_FORMATS = new Set(['int32', 'int64']);

export default function boundedIntegers(schema, _options, context) {
  const problems = [];
  const seen = new Set();
  const walk = (node, path) => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (node.type === 'integer' && !BOUNDED_FORMATS.has(node.format) && node.maximum === undefined && node.enum === undefined) {
      problems.push({ message: 'An integer a client sends needs format int32/int64, a maximum or an enum.', path: [...context.path, ...path] });
    }
    for (const [key, value] of Object.entries(node)) if (key !== 'example' && key !== 'examples') walk(value, [...path, key]);
  };
  walk(schema, []);
  return problems;
}
