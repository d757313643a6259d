// Lints every API of redocly.yaml twice: the split sources and the bundles in dist/,
// with the project's Spectral ruleset and with Redocly's. Any error fails the run.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { distDir, duplicateOperationIds, listApis, specsDir } from './apis.mjs';
import { binPath, run } from './run.mjs';
import { lintFile } from './spectral.mjs';

const SEVERITY = ['error', 'warn', 'info', 'hint'];
let errors = 0;

for (const { name, root } of listApis()) {
  const targets = [
    [root, 'sources'],
    [join(distDir, `${name}.yaml`), 'bundles'],
    [join(distDir, `${name}.json`), 'bundles'],
  ];
  for (const [file, kind] of targets) {
    const results = await lintFile(file, kind);
    for (const r of results) {
      const where = `${relative(specsDir, r.source ?? file)}:${r.range.start.line + 1}`;
      console.log(`${SEVERITY[r.severity].padEnd(5)} ${r.code} ${where} ${r.path.join('.')}\n      ${r.message}`);
    }
    errors += results.filter((r) => r.severity === 0).length;
    console.log(`spectral ${relative(specsDir, file)}: ${results.length} problem(s)`);
  }
}

for (const { id, apis } of duplicateOperationIds(JSON.parse(readFileSync(join(distDir, 'apis.json'), 'utf8')))) {
  console.log(`error svc-operation-id-unique: ${id} is the operationId of operations in ${apis.join(', ')}`);
  errors += 1;
}

run(binPath('redocly'), ['lint', '--format', 'stylish']);
for (const { name } of listApis()) run(binPath('redocly'), ['lint', join(distDir, `${name}.yaml`), '--format', 'stylish']);

if (errors > 0) {
  console.error(`spectral: ${errors} error(s)`);
  process.exit(1);
}
