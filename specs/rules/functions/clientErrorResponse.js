// Responses must document at least one 4xx status.
export default function clientErrorResponse(responses) {
  const codes = Object.keys(responses ?? {});
  return codes.some((code) => /^4(\d\d|XX)$/.test(code))
    ? []
    : [{ message: `Operation documents no 4xx response (has ${codes.join(', ') || 'none'}).` }];
}
