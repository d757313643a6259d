// Servers are templated by one variable per host whose default is a local address, and
// say which host role and region they are, so no vendor host is ever named.
const LOCAL = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

export default function localServer(server) {
  const problems = [];
  const match = /^\{([a-z_]+)\}$/.exec(server?.url ?? '');
  if (!match) {
    problems.push({ message: `Server url "${server?.url}" must be a single variable such as "{ingest_url}".` });
  } else {
    const fallback = server.variables?.[match[1]]?.default;
    if (!LOCAL.test(fallback ?? '')) {
      problems.push({ message: `Server variable "${match[1]}" must default to a local address, not "${fallback}".` });
    }
  }
  if (!server?.['x-svc-host-role']) problems.push({ message: 'Server has no x-svc-host-role.' });
  if (!['standard', 'eu'].includes(server?.['x-svc-region'])) {
    problems.push({ message: 'Server x-svc-region must be "standard" or "eu".' });
  }
  return problems;
}
