// Bundles every API of redocly.yaml into dist/<name>.yaml and dist/<name>.json,
// and writes dist/apis.json: the list of groups with their host role and servers, and
// `operationServers`: operationId → servers of each operation that declares its own
// (operation- or path-level `servers`), so that readers can tell which host roles serve it.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { distDir, listApis } from './apis.mjs';
import { binPath, run } from './run.mjs';

// Bundles are written to a scratch folder and moved into dist/ one file at a time, so
// that readers of dist/ never see a half-written bundle.
mkdirSync(distDir, { recursive: true });
const scratch = mkdtempSync(join(distDir, '.bundling-'));
const index = [];
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Servers with their variables' defaults filled in. */
const describeServers = (servers) =>
  servers.map((server) => ({
    hostRole: server['x-svc-host-role'],
    region: server['x-svc-region'],
    url: Object.entries(server.variables ?? {}).reduce(
      (url, [variable, { default: value }]) => url.replace(`{${variable}}`, value),
      server.url,
    ),
  }));
/** Said once for every group (shared/conventions.md), at the end of each bundle's description. */
const conventions = readFileSync(new URL('../shared/conventions.md', import.meta.url), 'utf8');
const withConventions = (description) => `${description.trimEnd()}\n\n${conventions}`;
/** On every answer of every operation (shared/headers/RequestId.yaml): written once, carried by each response of the bundles. */
const requestIdHeader = parse(readFileSync(new URL('../shared/headers/RequestId.yaml', import.meta.url), 'utf8'));
const REQUEST_ID_REF = { $ref: '#/components/headers/RequestId' };

/** The conventions at the end of the description, and `X-Request-Id` on every response (those of components and those written in place). */
function withSharedParts(doc) {
  doc.info.description = withConventions(doc.info.description);
  doc.components = { ...doc.components, headers: { ...doc.components?.headers, RequestId: requestIdHeader } };
  const operationResponses = Object.values(doc.paths).flatMap((item) => HTTP_METHODS.flatMap((method) => Object.values(item[method]?.responses ?? {})));
  for (const response of [...Object.values(doc.components.responses ?? {}), ...operationResponses]) {
    if (!response.$ref) response.headers = { 'X-Request-Id': REQUEST_ID_REF, ...response.headers };
  }
  return doc;
}
for (const { name } of listApis()) {
  for (const ext of ['yaml', 'json']) {
    const file = join(scratch, `${name}.${ext}`);
    run(binPath('redocly'), ['bundle', name, '--output', file, '--ext', ext]);
    if (ext === 'json') writeFileSync(file, JSON.stringify(withSharedParts(JSON.parse(readFileSync(file, 'utf8'))), null, 2) + '\n');
    else writeFileSync(file, stringify(withSharedParts(parse(readFileSync(file, 'utf8'))), { lineWidth: 0 }));
  }
  const bundle = parse(readFileSync(join(scratch, `${name}.yaml`), 'utf8'));
  index.push({
    name,
    title: bundle.info.title,
    hostRole: bundle['x-svc-host-role'],
    operations: Object.values(bundle.paths).flatMap((item) =>
      Object.values(item).filter((op) => op && op.operationId).map((op) => op.operationId),
    ),
    servers: describeServers(bundle.servers),
    operationServers: Object.fromEntries(
      Object.values(bundle.paths).flatMap((item) =>
        HTTP_METHODS.filter((method) => item[method] && (item[method].servers ?? item.servers)).map((method) => [
          item[method].operationId,
          describeServers(item[method].servers ?? item.servers),
        ]),
      ),
    ),
  });
}
writeFileSync(join(scratch, 'apis.json'), JSON.stringify(index, null, 2) + '\n');
const fresh = new Set(readdirSync(scratch));
for (const file of fresh) renameSync(join(scratch, file), join(distDir, file));
rmSync(scratch, { recursive: true, force: true });
for (const file of readdirSync(distDir)) {
  if (!fresh.has(file) && !file.startsWith('.bundling-')) rmSync(join(distDir, file), { force: true });
}
