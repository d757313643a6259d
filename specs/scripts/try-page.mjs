// The "try it" page of a group: Scalar's API reference (request console and code samples) with
// its browser bundle and the document inlined, so that it works offline, from a file or any
// static host, and sends requests only to the server the reader picks.
import Fastify from 'fastify';
import scalarPlugin from '@scalar/fastify-api-reference';

/**
 * Default ports of the Prism mocks per host role (`DEFAULT_PORTS` of @svc/mock, which depends
 * on this package and so is not imported; test/contract/docs-try.test.ts checks they agree).
 */
export const MOCK_PORTS = { ingest: 4010, app: 4011, experiment: 4012, api: 4013 };

/**
 * Scalar's standalone browser bundle. @scalar/fastify-api-reference ships it inside its code (a
 * 16 MB install, against ~300 MB for @scalar/api-reference); the plugin serves it at
 * `<prefix>/js/scalar.js`, read here without a network listener.
 */
export async function scalarBundle() {
  const app = Fastify();
  await app.register(scalarPlugin, { routePrefix: '/reference', configuration: { content: { openapi: '3.0.3', info: { title: '-', version: '-' }, paths: {} } } });
  const answer = await app.inject({ url: '/reference/js/scalar.js' });
  await app.close();
  if (answer.statusCode !== 200 || !answer.body.includes('createApiReference')) throw new Error(`Scalar's bundle not found (${answer.statusCode})`);
  // An inline script ends at the first `</script`: the bundle must not contain one.
  if (/<\/script/i.test(answer.body)) throw new Error("Scalar's bundle contains </script and cannot be inlined");
  return answer.body;
}

const escapeHtml = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

/** What the page can call and what it keeps, said at the top of the introduction. */
function notice(api, mockUrl) {
  const servers = api.servers.map((s) => `\`${s.url}\` (${s.hostRole}${s.region ? `, ${s.region}` : ''})`).join(', ');
  return `> **Try it.** *Test Request* sends real requests from your browser to the server picked under
> *Server*: the Prism mock of the \`${api.hostRole}\` host role, \`${mockUrl}\` (\`npm run mock\`; other
> ports with \`SVC_MOCK_BASE_PORT\`), or one of this API's servers, whose base URL you type in
> (defaults: ${servers}; \`npm start\` runs the reference server there). Operations with servers
> of their own list those instead. Credentials you type in stay in this page's memory: nothing
> is written to localStorage, sessionStorage or cookies, and reloading the page forgets them.
> The browser needs CORS answers: the mock gives them to every origin; the reference server to
> every origin for ingestion and experiment evaluation, and for the other groups only to the
> origins given with \`--cors-origin\` (a page opened from a file has the origin \`null\`: serve
> this folder over HTTP and list that origin). The reference server exposes no response header
> to pages (no \`Access-Control-Expose-Headers\`), so \`X-Request-Id\` and \`Retry-After\` are not shown.

`;
}

/** The HTML of the try-it page of `api` (an entry of apis.json) for its bundle with code samples. */
export function tryPage(api, doc, bundle) {
  if (!MOCK_PORTS[api.hostRole]) throw new Error(`${api.name}: no mock port for host role ${api.hostRole}`);
  const mockUrl = `http://127.0.0.1:${MOCK_PORTS[api.hostRole]}`;
  const content = { ...doc, info: { ...doc.info, description: notice(api, mockUrl) + doc.info.description } };
  const config = {
    content,
    servers: [{ url: mockUrl, description: `Prism mock of the ${api.hostRole} host role (npm run mock)` }, ...doc.servers],
    // Credentials live in memory only (Scalar's default, set so that an upgrade cannot change it).
    persistAuth: false,
    telemetry: false,
    // Off what reaches Scalar's services: its fonts' CDN, and (when served from localhost) its
    // AI chat, whose client keeps credentials, and its developer toolbar.
    withDefaultFonts: false,
    agent: { disabled: true },
    showDeveloperTools: 'never',
    // Our x-codeSamples (curl, @svc/client, svc_sdk, svc/sdk) instead of Scalar's generic clients.
    hiddenClients: true,
  };
  // `<` escaped so that no string in the document can end the script element.
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <!-- Nothing is loaded from elsewhere: requests go only to the server the reader picks. -->
    <meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; connect-src *">
    <title>${escapeHtml(api.title)} · try it</title>
  </head>
  <body>
    <div id="app"></div>
    <script>${bundle}</script>
    <script>Scalar.createApiReference('#app', ${json});</script>
  </body>
</html>
`;
}
