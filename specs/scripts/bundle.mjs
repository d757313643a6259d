// Bundles every API of redocly.yaml into dist/<name>.yaml and dist/<name>.json,
// and writes dist/apis.json: the list of groups with their host role and servers.
import { mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { distDir, listApis } from './apis.mjs';
import { binPath, run } from './run.mjs';

rmSync(distDir, { recursive: true, force: true });
mkdirSync(distDir, { recursive: true });
const index = [];
for (const { name } of listApis()) {
  for (const ext of ['yaml', 'json']) {
    run(binPath('redocly'), ['bundle', name, '--output', join(distDir, `${name}.${ext}`), '--ext', ext]);
  }
  const bundle = parse(readFileSync(join(distDir, `${name}.yaml`), 'utf8'));
  index.push({
    name,
    title: bundle.info.title,
    hostRole: bundle['x-svc-host-role'],
    operations: Object.values(bundle.paths).flatMap((item) =>
      Object.values(item).filter((op) => op && op.operationId).map((op) => op.operationId),
    ),
    servers: bundle.servers.map((server) => ({
      hostRole: server['x-svc-host-role'],
      region: server['x-svc-region'],
      url: Object.entries(server.variables ?? {}).reduce(
        (url, [variable, { default: value }]) => url.replace(`{${variable}}`, value),
        server.url,
      ),
    })),
  });
}
writeFileSync(join(distDir, 'apis.json'), JSON.stringify(index, null, 2) + '\n');
