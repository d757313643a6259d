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
