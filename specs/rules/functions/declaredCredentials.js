// Every operation declares `security`. Where it admits an unauthenticated alternative
// (`[]` or `{}`) because the key travels in the body, `x-svc-credentials` says where. An
// `x-svc-invalid-credentials-status` names a status the operation documents.
export default function declaredCredentials(operation) {
  if (!Array.isArray(operation?.security)) {
    return [{ message: 'Operation does not declare `security`.' }];
  }
  const problems = [];
  const open = operation.security.length === 0 || operation.security.some((r) => Object.keys(r).length === 0);
  const declared = Array.isArray(operation['x-svc-credentials']) && operation['x-svc-credentials'].length > 0;
  if (open && !declared) problems.push({ message: 'Operation admits requests without a security scheme but has no x-svc-credentials saying where the key goes.' });
  const invalidStatus = operation['x-svc-invalid-credentials-status'];
  if (invalidStatus !== undefined && !operation.responses?.[String(invalidStatus)]) {
    problems.push({ message: `x-svc-invalid-credentials-status ${invalidStatus} is not a documented response of the operation.` });
  }
  return problems;
}
