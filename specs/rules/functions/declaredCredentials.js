// Every operation declares `security`. Where it admits an unauthenticated alternative
// (`[]` or `{}`) because the key travels in the body, `x-svc-credentials` says where.
export default function declaredCredentials(operation) {
  if (!Array.isArray(operation?.security)) {
    return [{ message: 'Operation does not declare `security`.' }];
  }
  const open = operation.security.length === 0 || operation.security.some((r) => Object.keys(r).length === 0);
  const declared = Array.isArray(operation['x-svc-credentials']) && operation['x-svc-credentials'].length > 0;
  return open && !declared
    ? [{ message: 'Operation admits requests without a security scheme but has no x-svc-credentials saying where the key goes.' }]
    : [];
}
