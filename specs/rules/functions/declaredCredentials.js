// Every operation declares `security`. Where it admits an unauthenticated alternative
// (`[]` or `{}`) because the key travels in the body, `x-svc-credentials` says where (or
// `x-svc-signed-link`, for a link signed by the server). An
// `x-svc-invalid-credentials-status` names a status the operation documents.
export default function declaredCredentials(operation) {
  if (!Array.isArray(operation?.security)) {
    return [{ message: 'Operation does not declare `security`.' }];
  }
  const problems = [];
  const open = operation.security.length === 0 || operation.security.some((r) => Object.keys(r).length === 0);
  const declared = Array.isArray(operation['x-svc-credentials']) && operation['x-svc-credentials'].length > 0;
  // A signed link carries its own proof (`x-svc-signed-link` names its parameters) instead of a key.
  const signed = typeof operation['x-svc-signed-link']?.signature === 'string';
  if (open && !declared && !signed) problems.push({ message: 'Operation admits requests without a security scheme but has no x-svc-credentials (or x-svc-signed-link) saying where the key or signature goes.' });
  const invalidStatus = operation['x-svc-invalid-credentials-status'];
  if (invalidStatus !== undefined && !operation.responses?.[String(invalidStatus)]) {
    problems.push({ message: `x-svc-invalid-credentials-status ${invalidStatus} is not a documented response of the operation.` });
  }
  return problems;
}
