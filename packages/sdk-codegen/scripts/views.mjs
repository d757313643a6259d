#!/usr/bin/env node
// Writes the "codegen view" of every bundle of @svc/specs (dist/views/<name>.json), the list of
// what each view changed and at what cost (dist/views/<name>.changes.json), and the calls the
// SDK tests make against the mock, one per operation, built from the specs' examples
// (dist/calls.json), and those calls as code samples for the HTML docs (dist/samples.json:
// operationId → x-codeSamples, read by @svc/specs' docs). The views exist only for openapi-generator 5.0.0-beta2, which mis-reads
// several valid OpenAPI 3.0 constructs (see README.md); the bundles stay the contract.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { codegenView } from '../src/view.mjs';
import { groupCredentials, operationCalls } from '../src/calls.mjs';
import { operationSamples } from '../src/samples.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const distDir = resolve(here, '..', 'dist');
const specsDist = dirname(fileURLToPath(import.meta.resolve('@svc/specs/apis.json')));

const apis = JSON.parse(readFileSync(join(specsDist, 'apis.json'), 'utf8'));
rmSync(distDir, { recursive: true, force: true });
mkdirSync(join(distDir, 'views'), { recursive: true });
const calls = [];
const credentials = {};
const samples = {};
for (const api of apis) {
  const bundle = JSON.parse(readFileSync(join(specsDist, `${api.name}.json`), 'utf8'));
  const { doc, changes } = codegenView(bundle);
  writeFileSync(join(distDir, 'views', `${api.name}.json`), JSON.stringify(doc, null, 2) + '\n');
  writeFileSync(join(distDir, 'views', `${api.name}.changes.json`), JSON.stringify(changes, null, 2) + '\n');
  const groupCalls = operationCalls(api, bundle, doc);
  calls.push(...groupCalls);
  credentials[api.name] = groupCredentials(doc);
  for (const call of groupCalls) samples[call.operationId] = operationSamples(call, { api, bundle, view: doc, credentials: credentials[api.name] });
  console.log(`${api.name}: ${changes.length} changes, ${api.operations.length} operations`);
}
writeFileSync(join(distDir, 'apis.json'), JSON.stringify(apis, null, 2) + '\n');
writeFileSync(join(distDir, 'credentials.json'), JSON.stringify(credentials, null, 2) + '\n');
writeFileSync(join(distDir, 'calls.json'), JSON.stringify(calls, null, 2) + '\n');
writeFileSync(join(distDir, 'samples.json'), JSON.stringify(samples, null, 2) + '\n');
