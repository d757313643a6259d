// Bundles the console for browsers into dist/: one script and one style sheet, named by their
// content hash (the server lets browsers keep them for a year), and index.html naming them
// (revalidated on every visit).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist);

const { metafile } = await build({
  absWorkingDir: root,
  entryPoints: ['src/main.ts'],
  entryNames: 'console-[hash]',
  // The replay player (rrweb) in a chunk of its own, loaded when a replay is played.
  splitting: true,
  chunkNames: 'chunk-[hash]',
  outdir: 'dist',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome111', 'edge111', 'firefox114', 'safari16.4'],
  minify: true,
  metafile: true,
  // The client's Node-only helpers (export files, webhooks) import node: modules; the console
  // imports none of them, so they are shaken out, and these imports with them.
  external: ['node:*'],
  logLevel: 'warning',
});

// A data: URL in a style sheet (rrweb's mouse cursor) is inline, whatever esbuild calls it.
const external = Object.values(metafile.outputs).flatMap((output) =>
  output.imports.filter((imported) => imported.external && !imported.path.startsWith('data:')).map((imported) => imported.path),
);
if (external.length > 0) throw new Error(`the bundle imports ${external.join(', ')}: the console would not load in a browser`);
const outputs = Object.keys(metafile.outputs).map((path) => basename(path));
const named = (extension) => {
  const [only, ...others] = outputs.filter((name) => name.startsWith('console-') && name.endsWith(extension));
  if (!only || others.length > 0) throw new Error(`expected one console-*${extension} file in dist, found ${outputs.join(', ')}`);
  return only;
};
const page = readFileSync(`${root}src/index.html`, 'utf8').replace('%SCRIPT%', named('.js')).replace('%STYLES%', named('.css'));
writeFileSync(`${dist}/index.html`, page);
console.log(`dist/: index.html, ${outputs.join(', ')}`);
