// `x-svc-pagination` matches its operation: a GET; `parameter` and `limit` are query parameters
// it takes; `next` a member of its 200 JSON answer; `items` an array member of that answer, or
// absent when the answer is the array. Clients and SDK templates read these names blindly.
const STYLES = {
  token: { required: ['parameter', 'next'], allowed: ['parameter', 'next', 'limit', 'items'] },
  offset: { required: ['parameter', 'limit'], allowed: ['parameter', 'limit', 'items'] },
  none: { required: [], allowed: ['items'] },
};

const own = (object, name) => object !== null && typeof object === 'object' && Object.hasOwn(object, name);

export default function paginationShape(operation, _options, context) {
  const pagination = operation?.['x-svc-pagination'];
  if (pagination === undefined) return [];
  const method = context.path[context.path.length - 1];
  if (method !== 'get') return [{ message: `x-svc-pagination on a ${String(method).toUpperCase()}: only a GET lists.` }];
  const style = own(STYLES, pagination?.style) ? STYLES[pagination.style] : undefined;
  if (!style) return [{ message: `x-svc-pagination.style is token, offset or none, not ${JSON.stringify(pagination?.style)}.` }];

  const problems = [];
  for (const key of Object.keys(pagination)) {
    if (key !== 'style' && !style.allowed.includes(key)) problems.push({ message: `x-svc-pagination.${key} has no meaning for style ${pagination.style}.` });
  }
  for (const key of style.required) {
    if (typeof pagination[key] !== 'string') problems.push({ message: `x-svc-pagination of style ${pagination.style} needs ${key}.` });
  }
  const queryNames = (operation.parameters ?? []).filter((p) => p?.in === 'query').map((p) => p.name);
  for (const key of ['parameter', 'limit']) {
    if (typeof pagination[key] === 'string' && !queryNames.includes(pagination[key])) {
      problems.push({ message: `x-svc-pagination.${key} \`${pagination[key]}\` is not a query parameter of the operation.` });
    }
  }
  const answer = operation.responses?.['200']?.content?.['application/json']?.schema;
  const members = own(answer, 'properties') ? answer.properties : {};
  if (typeof pagination.next === 'string' && !own(members, pagination.next)) {
    problems.push({ message: `x-svc-pagination.next \`${pagination.next}\` is not a member of the 200 JSON answer.` });
  }
  if (pagination.items === undefined) {
    if (answer?.type !== 'array') problems.push({ message: 'x-svc-pagination.items is left out, but the 200 JSON answer is not an array.' });
  } else if (!own(members, pagination.items) || members[pagination.items]?.type !== 'array') {
    problems.push({ message: `x-svc-pagination.items \`${pagination.items}\` is not an array member of the 200 JSON answer.` });
  }
  return problems;
}
