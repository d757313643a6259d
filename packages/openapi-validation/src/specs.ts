// Loads the bundles of @svc/specs (specs/dist) as listed in apis.json. SVC_SPECS_DIST points
// the tests at another folder (used once to prove that a broken example fails the tests).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ApiEntry {
  name: string;
  title: string;
  hostRole: string;
  operations: string[];
  servers: { hostRole: string; region: string; url: string }[];
  /** operationId → servers, for operations that declare their own (and are served by those servers' roles). */
  operationServers: Record<string, { hostRole: string; region: string; url: string }[]>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Doc = Record<string, any>;

export interface Bundle extends ApiEntry {
  doc: Doc;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function specsDistDir(): string {
  if (process.env.SVC_SPECS_DIST) return process.env.SVC_SPECS_DIST;
  return dirname(fileURLToPath(import.meta.resolve('@svc/specs/apis.json')));
}

let cache: Bundle[] | undefined;

export function loadBundles(): Bundle[] {
  if (cache) return cache;
  const dir = specsDistDir();
  const index = join(dir, 'apis.json');
  if (!existsSync(index)) throw new Error(`${index} is missing: run npx turbo run build --filter=@svc/specs`);
  const apis = JSON.parse(readFileSync(index, 'utf8')) as ApiEntry[];
  cache = apis.map((api) => ({ ...api, doc: JSON.parse(readFileSync(join(dir, `${api.name}.json`), 'utf8')) }));
  return cache;
}

export function bundle(name: string): Bundle {
  const found = loadBundles().find((b) => b.name === name);
  if (!found) throw new Error(`no bundle named ${name}`);
  return found;
}

/** Resolves a local JSON pointer (`#/components/...`). */
export function resolvePointer(doc: Doc, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local refs are supported: ${ref}`);
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) throw new Error(`dangling $ref ${ref}`);
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Follows `$ref` chains of non-schema objects (parameters, responses, examples...). */
export function deref<T = Doc>(doc: Doc, node: unknown): T {
  let current = node as Doc;
  for (let i = 0; current && typeof current === 'object' && typeof current.$ref === 'string'; i++) {
    if (i > 20) throw new Error(`$ref loop at ${current.$ref}`);
    current = resolvePointer(doc, current.$ref) as Doc;
  }
  return current as T;
}

export interface OperationRef {
  bundle: Bundle;
  path: string;
  method: (typeof HTTP_METHODS)[number];
  op: Doc;
  pathItem: Doc;
}

export function operations(): OperationRef[] {
  const out: OperationRef[] = [];
  for (const b of loadBundles()) {
    for (const [path, pathItem] of Object.entries(b.doc.paths ?? {}) as [string, Doc][]) {
      for (const method of HTTP_METHODS) {
        if (pathItem[method]) out.push({ bundle: b, path, method, op: pathItem[method], pathItem });
      }
    }
  }
  return out;
}

export function findOperation(method: string, path: string): OperationRef {
  const found = operations().find((o) => o.method === method.toLowerCase() && o.path === path);
  if (!found) throw new Error(`no operation ${method} ${path} in any bundle`);
  return found;
}

/**
 * The operation whose path template matches a concrete path, with the path parameters; a
 * template without parameters (`/a/list`) wins over one with (`/a/{id}`).
 */
export function matchOperation(method: string, path: string): { ref: OperationRef; pathParams: Record<string, string> } {
  const literal = operations().find((o) => o.method === method.toLowerCase() && o.path === path);
  if (literal) return { ref: literal, pathParams: {} };
  for (const ref of operations()) {
    if (ref.method !== method.toLowerCase()) continue;
    const names: string[] = [];
    const pattern = ref.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([^}]+)\\?\}/g, (_m, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    const m = new RegExp(`^${pattern}$`).exec(path);
    if (m) {
      return { ref, pathParams: Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)])) };
    }
  }
  throw new Error(`no operation of the specs matches ${method} ${path}`);
}
