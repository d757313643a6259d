// Publishes the bundles as self-contained HTML docs: site/<name>.html per API (Redoc scripts
// inlined, so the pages work offline), site/<name>.try.html (Scalar with a request console,
// see try-page.mjs), the bundles next to them for download, and site/index.html linking every
// group with its host role and operations. Both pages show code samples of every operation
// (x-codeSamples: curl, @svc/client, Python and Go SDKs) from @svc/sdk-codegen's build.
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { distDir, specsDir } from './apis.mjs';
import { binPath, run } from './run.mjs';
import { scalarBundle, tryPage } from './try-page.mjs';

const siteDir = join(specsDir, 'site');
const apis = JSON.parse(readFileSync(join(distDir, 'apis.json'), 'utf8'));
// A file of a workspace that depends on this one, so not imported: turbo builds it before docs.
const samplesFile = join(specsDir, '..', 'packages', 'sdk-codegen', 'dist', 'samples.json');
const samples = JSON.parse(readFileSync(samplesFile, 'utf8'));

/** The bundle with `x-codeSamples` on every operation; the bundles themselves stay without. */
function withSamples(doc) {
  const copy = structuredClone(doc);
  for (const item of Object.values(copy.paths)) {
    for (const op of Object.values(item).filter((op) => op?.operationId)) {
      if (!samples[op.operationId]) throw new Error(`${samplesFile} has no samples for ${op.operationId}: rebuild @svc/sdk-codegen`);
      op['x-codeSamples'] = samples[op.operationId];
    }
  }
  return copy;
}

const escapeHtml = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function indexPage() {
  const rows = apis
    .map(
      (api) => `      <section>
        <h2><a href="${escapeHtml(api.name)}.html">${escapeHtml(api.title)}</a></h2>
        <p><a href="${escapeHtml(api.name)}.try.html">Try it</a> (request console) ·
          host role <code>${escapeHtml(api.hostRole)}</code> ·
          bundle <a href="${escapeHtml(api.name)}.yaml">YAML</a> · <a href="${escapeHtml(api.name)}.json">JSON</a></p>
        <ul>
${api.operations.map((id) => `          <li><code>${escapeHtml(id)}</code></li>`).join('\n')}
        </ul>
      </section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>svc API reference</title>
    <style>
      body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
      section { border-top: 1px solid #ddd; padding-top: .5rem; }
      ul { columns: 2; }
    </style>
  </head>
  <body>
    <h1>svc API reference</h1>
    <p>${apis.length} interface groups, ${apis.reduce((n, api) => n + api.operations.length, 0)} operations.
      Each group has a reference page and a <em>try it</em> page that sends requests to the Prism mock
      (<code>npm run mock</code>) or to a server whose base URL you enter; credentials are never stored.</p>
    <main>
${rows}
    </main>
  </body>
</html>
`;
}

// Built in a scratch folder and swapped in whole, so a reader never sees half a site.
const scratch = mkdtempSync(join(specsDir, '.site-'));
chmodSync(scratch, 0o755);
try {
  const bundle = await scalarBundle();
  for (const api of apis) {
    const doc = withSamples(JSON.parse(readFileSync(join(distDir, `${api.name}.json`), 'utf8')));
    const docFile = join(scratch, `.${api.name}.docs.json`);
    writeFileSync(docFile, JSON.stringify(doc));
    run(binPath('redocly'), [
      'build-docs',
      docFile,
      '--output',
      join(scratch, `${api.name}.html`),
      '--title',
      api.title,
      '--inlineBundle',
    ]);
    rmSync(docFile);
    writeFileSync(join(scratch, `${api.name}.try.html`), tryPage(api, doc, bundle));
    for (const ext of ['yaml', 'json']) copyFileSync(join(distDir, `${api.name}.${ext}`), join(scratch, `${api.name}.${ext}`));
  }
  writeFileSync(join(scratch, 'index.html'), indexPage());
  rmSync(siteDir, { recursive: true, force: true });
  renameSync(scratch, siteDir);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`docs: ${readdirSync(siteDir).filter((f) => f.endsWith('.html')).length} pages in ${siteDir}`);
