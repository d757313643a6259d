// Text holding U+0000 (NUL), in the groups whose root says `x-svc-nul-text: refused`: their
// entities may live in PostgreSQL, whose text cannot hold it.
import type { RequestProblem } from './request-validator.js';

const hasNul = (value: unknown): boolean => {
  if (typeof value === 'string') return value.includes('\0');
  if (Array.isArray(value)) return value.some(hasNul);
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([key, inner]) => key.includes('\0') || hasNul(inner));
  return false;
};

/** A problem for each parameter (`location:name` keys) and for the body that holds a NUL. */
export function nulProblems(params: ReadonlyMap<string, unknown>, body: unknown): RequestProblem[] {
  const message = 'must not contain U+0000 (NUL)';
  const problems: RequestProblem[] = [];
  for (const [key, value] of params) {
    const [location, name] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
    if (hasNul(value)) problems.push({ where: `${location} parameter ${name}`, message });
  }
  if (hasNul(body)) problems.push({ where: 'body', message });
  return problems;
}
