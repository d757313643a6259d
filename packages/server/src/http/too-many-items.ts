// A body array longer than its schema's `maxItems`: the operations that document 413 answer
// it as a payload too large (ingestion's 2000 events, user mapping's 2000 mappings).
import type { RequestProblem } from '@svc/openapi-validation';

/** The limit of the first body array over its `maxItems`, if any. */
export function tooManyItems(problems: RequestProblem[]): { path: string; limit: number } | undefined {
  for (const problem of problems) {
    if (!problem.where.endsWith('body')) continue;
    const error = problem.errors?.find((e) => e.keyword === 'maxItems');
    if (error) return { path: error.instancePath, limit: Number(error.params.limit) };
  }
  return undefined;
}
