import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';

export const specsDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const distDir = join(specsDir, 'dist');

/** The interface groups named in redocly.yaml, each with its root document. */
export function listApis() {
  const config = parse(readFileSync(join(specsDir, 'redocly.yaml'), 'utf8'));
  return Object.entries(config.apis).map(([name, { root }]) => ({ name, root: join(specsDir, root) }));
}

/**
 * operationIds used by more than one operation across all APIs (from dist/apis.json): handlers,
 * clients and the merged mock documents are keyed by operationId, so it must be unique in
 * the whole product, not only in one API.
 */
export function duplicateOperationIds(index) {
  const owners = new Map();
  for (const { name, operations } of index) {
    for (const id of operations) owners.set(id, [...(owners.get(id) ?? []), name]);
  }
  return [...owners].filter(([, apis]) => apis.length > 1).map(([id, apis]) => ({ id, apis }));
}
