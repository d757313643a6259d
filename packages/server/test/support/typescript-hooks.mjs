// Module hooks for `typescript.mjs`: `.ts` files are stripped of their types (oxc, which vite
// ships), and `./x.js` imports find `./x.ts` when no `.js` file is there.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'rolldown/utils';

export async function resolve(specifier, context, nextResolve) {
  if (specifier.endsWith('.js') && (specifier.startsWith('.') || specifier.startsWith('file:')) && context.parentURL?.endsWith('.ts')) {
    const typescript = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (existsSync(fileURLToPath(typescript))) return { url: typescript.href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { code, errors } = transformSync(path, await readFile(path, 'utf8'), { sourcemap: false });
  if (errors.length > 0) throw new Error(`${path}: ${errors.map((error) => error.message).join('; ')}`);
  return { format: 'module', source: code, shortCircuit: true };
}
