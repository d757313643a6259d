// What a parsed JSON value may hold that JSON text allows but that cannot be stored and
// answered as sent: strings or keys with a lone UTF-16 surrogate (`"\ud800"` parses, but
// no UTF-8 store can keep it), numbers beyond the range of a double (`1e400` parses as
// Infinity), and nesting so deep that recursive code (JSON.stringify among it) would
// overflow the stack.

/** Nesting refused anywhere in a request; the documented limits (40 for properties) are lower. */
export const MAX_JSON_DEPTH = 100;

export interface JsonValueFlaw {
  /** JSON pointer of the flawed value. */
  instancePath: string;
  message: string;
}

const pointerToken = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

function flawOf(node: unknown, depth: number, strings = true): string | undefined {
  if (typeof node === 'string') return !strings || node.isWellFormed() ? undefined : 'holds a lone UTF-16 surrogate';
  if (typeof node === 'number') return Number.isFinite(node) ? undefined : 'is a number beyond the range of a double';
  if (node !== null && typeof node === 'object' && depth > MAX_JSON_DEPTH) return `nests deeper than ${MAX_JSON_DEPTH} levels`;
  return undefined;
}

/** The path to the first flaw, found by a second, slower walk that keeps paths. */
function locate(value: unknown): JsonValueFlaw {
  const stack: [unknown, string, number][] = [[value, '', 1]];
  while (stack.length > 0) {
    const [node, path, depth] = stack.pop()!;
    const message = flawOf(node, depth);
    if (message) return { instancePath: path, message };
    if (node === null || typeof node !== 'object') continue;
    for (const [key, child] of Object.entries(node)) {
      if (!key.isWellFormed()) return { instancePath: `${path}/${pointerToken(key)}`, message: 'has a key with a lone UTF-16 surrogate' };
      stack.push([child, `${path}/${pointerToken(key)}`, depth + 1]);
    }
  }
  throw new Error('locate() called on a value without flaw');
}

/**
 * The first flaw of a parsed JSON value, or undefined. Iterative (no recursion, whatever the
 * depth) and without allocation per node on the common, flawless path. Strings and keys are
 * checked only when the `text` the value was parsed from could give them a lone surrogate: a
 * `\u` escape, or text that is not well formed itself. Checking every string was
 * most of the walk, and text sent as UTF-8 rarely has either.
 */
export function jsonValueFlaw(value: unknown, text: string): JsonValueFlaw | undefined {
  const strings = text.includes('\\u') || !text.isWellFormed();
  const nodes: unknown[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop()!;
    if (flawOf(node, depth, strings)) return locate(value);
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (const child of node) {
        nodes.push(child);
        depths.push(depth + 1);
      }
      continue;
    }
    for (const key in node) {
      if (strings && !key.isWellFormed()) return locate(value);
      nodes.push((node as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return undefined;
}

/** Whether objects and arrays nest deeper than `limit` (a flat object is 1); stops counting past it. */
export function depthExceeds(value: unknown, limit: number, depth = 1): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth > limit) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) if (depthExceeds(child, limit, depth + 1)) return true;
  return false;
}
