// An operationId is <verb><Noun> where the verb is allowed for the HTTP method
// (options.verbs, e.g. { get: ['get', 'list'], post: ['create'] }) and the noun is PascalCase.
export default function operationIdConvention(operation, options, context) {
  const method = String(context.path[context.path.length - 1]).toLowerCase();
  const verbs = options.verbs[method];
  if (!verbs) return [];
  const id = operation?.operationId;
  if (typeof id !== 'string') return [{ message: 'Operation has no operationId.' }];
  const match = /^([a-z]+)([A-Z][A-Za-z0-9]*)$/.exec(id);
  if (!match || !verbs.includes(match[1])) {
    return [
      {
        message: `operationId "${id}" must be one of ${verbs.map((v) => `${v}<Noun>`).join(', ')} for ${method.toUpperCase()} (noun in PascalCase).`,
        path: [...context.path, 'operationId'],
      },
    ];
  }
  return [];
}
