// Merges several bundled OpenAPI 3.0 documents that share a host role into one
// document, so that one Prism process (one port) serves all of them.
//
// - paths: union; the same path in two documents is an error (one port cannot serve
//   two different operations on the same path and method).
// - components: union per section. A name defined identically in several documents is
//   kept once; a name defined differently is renamed in the later document to
//   `<Name>__<group>` and every `$ref` of that document is rewritten.
// - tags: union by name; servers: those of the first document (the groups of one role
//   share the role's servers; operation-level servers are kept as they are).
// - security: each document's root `security` (if any) is pushed down to its operations
//   that have none, so that merging does not change which credentials an operation needs.
//
// After merging, every local `$ref` is checked to resolve; a dangling one is an error.

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

const clone = (value) => structuredClone(value);

/** Replaces `#/components/<section>/<from>` refs by `<to>` everywhere in `node` (in place). */
function rewriteRefs(node, renames) {
  if (Array.isArray(node)) {
    for (const item of node) rewriteRefs(item, renames);
    return;
  }
  if (!node || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && renames.has(value)) node[key] = renames.get(value);
    else rewriteRefs(value, renames);
  }
}

/** Every local `$ref` in `node`, with the JSON path where it was found. */
export function collectRefs(node, at = '#', out = []) {
  if (Array.isArray(node)) node.forEach((item, i) => collectRefs(item, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push({ ref: value, at });
      else collectRefs(value, `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, out);
    }
  }
  return out;
}

/** Resolves a local JSON pointer (`#/a/b`) in `doc`; undefined when it does not exist. */
export function resolvePointer(doc, ref) {
  if (!ref.startsWith('#')) return undefined;
  let node = doc;
  for (const raw of ref.slice(2).split('/')) {
    if (raw === '' && ref === '#') break;
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node == null || typeof node !== 'object' || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
}

/** Throws when the merged document has a dangling `$ref`, a duplicate operationId or no paths. */
export function checkMerged(doc) {
  const problems = [];
  for (const { ref, at } of collectRefs(doc)) {
    if (!ref.startsWith('#/')) problems.push(`${at}: non-local $ref ${ref}`);
    else if (resolvePointer(doc, ref) === undefined) problems.push(`${at}: dangling $ref ${ref}`);
  }
  const ids = new Map();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method) || !op?.operationId) continue;
      if (ids.has(op.operationId)) problems.push(`duplicate operationId ${op.operationId} (${ids.get(op.operationId)}, ${method} ${path})`);
      ids.set(op.operationId, `${method} ${path}`);
    }
  }
  if (!doc.paths || Object.keys(doc.paths).length === 0) problems.push('no paths');
  if (problems.length) throw new Error(`merged document is invalid:\n  ${problems.join('\n  ')}`);
  return doc;
}

/**
 * Splits one bundle by the host roles that serve its operations: an operation with its own
 * servers (apis.json `operationServers`) is served by the roles of those servers, every
 * other operation by the bundle's role. Returns role → document; a role that serves only
 * some operations gets a copy with just those (and its `x-svc-host-role` set to the role).
 *
 * @param {{ name: string, hostRole: string, operationServers?: Record<string, { hostRole: string }[]> }} api
 * @param {object} doc the bundle
 * @returns {Map<string, object>}
 */
export function splitByHostRole(api, doc) {
  const served = new Map(); // role -> Set of "method path"
  let total = 0;
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method) || !op) continue;
      total++;
      const own = api.operationServers?.[op.operationId];
      for (const role of new Set(own ? own.map((server) => server.hostRole) : [api.hostRole])) {
        if (!served.has(role)) served.set(role, new Set());
        served.get(role).add(`${method} ${path}`);
      }
    }
  }
  const parts = new Map();
  for (const [role, operations] of served) {
    if (operations.size === total) {
      parts.set(role, doc);
      continue;
    }
    const copy = clone(doc);
    copy['x-svc-host-role'] = role;
    for (const [path, item] of Object.entries(copy.paths)) {
      for (const method of Object.keys(item)) {
        if (HTTP_METHODS.has(method) && !operations.has(`${method} ${path}`)) delete item[method];
      }
      if (!Object.keys(item).some((key) => HTTP_METHODS.has(key))) delete copy.paths[path];
    }
    parts.set(role, copy);
  }
  return parts;
}

/**
 * @param {{ name: string, doc: object }[]} parts bundles of one host role, in apis.json order
 * @param {{ role: string }} options
 * @returns {{ doc: object, renamed: { group: string, from: string, to: string }[] }}
 */
export function mergeBundles(parts, { role }) {
  if (parts.length === 0) throw new Error(`no bundle for host role ${role}`);
  const first = parts[0].doc;
  const merged = {
    openapi: first.openapi,
    info: {
      title: parts.length === 1 ? first.info.title : `svc mock: ${role} host role`,
      version: parts.length === 1 ? first.info.version : parts.map((p) => `${p.name}@${p.doc.info.version}`).join(' '),
      description:
        parts.length === 1
          ? first.info.description
          : `Merged for the mock from: ${parts.map((p) => `${p.name} (${p.doc.info.title})`).join(', ')}.`,
    },
    servers: clone(first.servers ?? []),
    tags: [],
    paths: {},
    components: {},
    'x-svc-host-role': role,
    'x-svc-merged-from': parts.map((p) => p.name),
  };
  const renamed = [];
  const tagNames = new Set();
  for (const { name, doc: original } of parts) {
    const doc = clone(original);
    if (doc['x-svc-host-role'] !== undefined && doc['x-svc-host-role'] !== role) {
      throw new Error(`bundle ${name} has host role ${doc['x-svc-host-role']}, expected ${role}`);
    }
    // Components: find clashing names first, rename them in this document, then copy.
    const renames = new Map();
    for (const [section, entries] of Object.entries(doc.components ?? {})) {
      const target = (merged.components[section] ??= {});
      for (const [key, value] of Object.entries(entries)) {
        if (key in target && JSON.stringify(target[key]) !== JSON.stringify(value)) {
          let to = `${key}__${name.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
          for (let i = 2; to in target || to in entries; i++) to = `${key}__${name}_${i}`;
          renames.set(`#/components/${section}/${key}`, `#/components/${section}/${to}`);
          renamed.push({ group: name, section, from: key, to });
        }
      }
    }
    if (renames.size) {
      rewriteRefs(doc, renames);
      for (const [from, to] of renames) {
        const [, , section, oldKey] = from.split('/');
        const newKey = to.split('/')[3];
        doc.components[section][newKey] = doc.components[section][oldKey];
        delete doc.components[section][oldKey];
        if (section === 'securitySchemes') {
          // Security requirements name schemes without $ref.
          for (const item of Object.values(doc.paths ?? {})) {
            for (const op of Object.values(item)) {
              for (const req of op?.security ?? []) {
                if (oldKey in req) {
                  req[newKey] = req[oldKey];
                  delete req[oldKey];
                }
              }
            }
          }
          for (const req of doc.security ?? []) {
            if (oldKey in req) {
              req[newKey] = req[oldKey];
              delete req[oldKey];
            }
          }
        }
      }
    }
    for (const [section, entries] of Object.entries(doc.components ?? {})) {
      const target = (merged.components[section] ??= {});
      for (const [key, value] of Object.entries(entries)) if (!(key in target)) target[key] = value;
    }
    // Paths, with the root security pushed down and the group's servers kept when they
    // differ from the merged document's.
    const sameServers = JSON.stringify(doc.servers ?? []) === JSON.stringify(merged.servers);
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      if (path in merged.paths) throw new Error(`path ${path} is defined by two bundles of host role ${role}`);
      for (const [method, op] of Object.entries(item)) {
        if (!HTTP_METHODS.has(method) || !op) continue;
        if (doc.security && op.security === undefined) op.security = clone(doc.security);
        if (!sameServers && op.servers === undefined && item.servers === undefined) op.servers = clone(doc.servers);
        op['x-svc-group'] = name;
      }
      merged.paths[path] = item;
    }
    for (const tag of doc.tags ?? []) {
      if (!tagNames.has(tag.name)) {
        tagNames.add(tag.name);
        merged.tags.push(tag);
      }
    }
  }
  if (merged.tags.length === 0) delete merged.tags;
  return { doc: checkMerged(merged), renamed };
}
