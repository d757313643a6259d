// Runs openapi-generator 5.0.0-beta2 on the codegen view of every bundle. The JAR comes from the
// npm package @openapitools/openapi-generator-cli@1.0.18-5.0.0-beta2 (installed under the alias
// openapi-generator-jar), the last one that ships the generator itself: the v2 wrapper would
// download its JAR from Maven Central, which CI cannot reach.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const viewsDir = resolve(here, '..', 'dist', 'views');
export const callsFile = resolve(here, '..', 'dist', 'calls.json');
/** `{ api: { authorization, inRequest } }`: how requests carry credentials (see src/calls.mjs groupCredentials). */
export const credentialsFile = resolve(here, '..', 'dist', 'credentials.json');

export function generatorJar() {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('openapi-generator-jar/package.json')), 'bin', 'openapi-generator.jar');
}

/** apis.json of the views: [{ name, title, hostRole, operations, servers, operationServers }]. */
export function loadApis() {
  return JSON.parse(readFileSync(resolve(viewsDir, '..', 'apis.json'), 'utf8'));
}

function run(args) {
  return new Promise((done, fail) => {
    const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? done() : fail(new Error(`java ${args.join(' ')} exited ${code}\n${output.slice(-4000)}`))));
  });
}

/**
 * Generates `generator` output for every API into `<outDir>/<api name>` (emptied first),
 * two generator processes at a time. `properties(api)` gives the additional properties;
 * tests and docs are not written, model docs only when `modelDocs`, API docs when `apiDocs`
 * (templates may turn either kind of doc into code).
 */
export async function generateAll({ generator, outDir, properties, templateDir, modelDocs = false, apiDocs = false, concurrency = 2 }) {
  const apis = loadApis();
  const queue = [...apis];
  const worker = async () => {
    for (let api = queue.shift(); api; api = queue.shift()) {
      const out = join(outDir, api.name);
      rmSync(out, { recursive: true, force: true });
      const props = Object.entries(properties(api)).map(([k, v]) => `${k}=${v}`).join(',');
      const args = ['-jar', generatorJar(), 'generate', '-i', join(viewsDir, `${api.name}.json`), '-g', generator, '-o', out];
      args.push('--additional-properties', props, '--global-property', `apiTests=false,modelTests=false,apiDocs=${apiDocs},modelDocs=${modelDocs}`);
      if (templateDir) args.push('-t', templateDir);
      await run(args);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return apis;
}
