// The server's layering, checked by `npm run lint`: entry points (cli, index, server) wire the
// interface groups, the HTTP layer and the storage; a group reaches another only through model/
// and shared/; storage never imports a group or the HTTP layer; model/ and shared/ import
// neither; and there are no import cycles. docs/architecture.md draws the layers.
const GROUPS = '(annotations|cohorts|deletion|delivery-metrics|experiment|export|feedback|ingestion|reporting|session-replays|taxonomy|usermap)';
const ENTRY = '^src/(cli|index|server)[.]ts$';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Import cycles make the layers meaningless.', from: {}, to: { circular: true } },
    {
      name: 'groups-apart',
      severity: 'error',
      comment: 'An interface group reaches another only through model/ or shared/ (server.ts composes them).',
      from: { path: `^src/${GROUPS}/` },
      to: { path: `^src/${GROUPS}/`, pathNot: '^src/$1/' },
    },
    {
      name: 'storage-below-groups',
      severity: 'error',
      comment: 'Storage serves every group; it imports none, nor the HTTP layer or the entry points.',
      from: { path: '^src/store/' },
      to: { path: [`^src/${GROUPS}/`, '^src/http/', ENTRY] },
    },
    {
      name: 'model-and-shared-at-the-bottom',
      severity: 'error',
      comment: 'model/ (the domain both groups and engines read) and shared/ (helpers) import no group, storage, HTTP layer or entry point; shared/ not model/ either.',
      from: { path: '^src/(model|shared)/' },
      to: { path: [`^src/${GROUPS}/`, '^src/store/', '^src/http/', ENTRY] },
    },
    { name: 'shared-below-model', severity: 'error', from: { path: '^src/shared/' }, to: { path: '^src/model/' } },
    {
      name: 'http-below-groups',
      severity: 'error',
      comment: 'The HTTP layer serves operations by their types; it knows no group, and storage only through its interfaces.',
      from: { path: '^src/http/' },
      to: { path: [`^src/${GROUPS}/`, ENTRY] },
    },
    { name: 'not-to-tests', severity: 'error', from: { path: '^src/' }, to: { path: '^test/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
