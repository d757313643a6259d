// The web console (@svc/console) under /console on the app host: the files of its build,
// found through the package's exports map. Only flat file names are served, so no request
// reaches outside the folder whatever its dots, slashes or escapes.
import { readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The host role whose operations the console calls: served there, the page calls its own origin. */
export const CONSOLE_HOST_ROLE = 'app';
const INDEX = 'index.html';
const FILE_NAME = /^[\w-][\w.-]*$/;
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
// The page holds a project's secret key: it runs only its own script and talks only to this host.
// Styles may be inline for the session replay player alone: rrweb rebuilds the recorded page
// (its <style> elements and style attributes) in a frame without scripts that inherits this
// policy. No script, connection or image of the recording's own hosts is allowed.
const PAGE_HEADERS = {
  'cache-control': 'no-cache',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
};
// The build names every other file by its content hash: a new build brings new names.
const ASSET_HEADERS = { 'cache-control': 'public, max-age=31536000, immutable' };
export const CONSOLE_NOT_BUILT = 'The console is not built: run `npm run build -w @svc/console` (`npm start` builds it), then reload';

/** The folder of the console's build, where the installed @svc/console's exports map puts it. */
export function consoleDirectory(): string | undefined {
  try {
    return fileURLToPath(new URL('.', import.meta.resolve(`@svc/console/dist/${INDEX}`)));
  } catch {
    return undefined;
  }
}

const fileStat = (path: string) => stat(path).then((found) => (found.isFile() ? found : undefined), () => undefined);

async function sendFile(directory: string | undefined, name: string, request: FastifyRequest, reply: FastifyReply) {
  const refuse = (status: number, error: string) => reply.code(status).send({ code: status, error });
  if (directory === undefined || !(await fileStat(join(directory, INDEX)))) return refuse(503, CONSOLE_NOT_BUILT);
  const type = CONTENT_TYPES[extname(name)];
  const path = join(directory, name);
  const file = FILE_NAME.test(name) && type ? await fileStat(path) : undefined;
  if (!type || !file) return refuse(404, `No console file at ${request.url.split('?')[0]}`);
  const etag = `W/"${file.size}-${Math.trunc(file.mtimeMs)}"`;
  reply.headers({ 'content-type': type, etag, 'x-content-type-options': 'nosniff', ...(name === INDEX ? PAGE_HEADERS : ASSET_HEADERS) });
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.code(200).send(await readFile(path));
}

/** GET (and HEAD) of /console and /console/ (the page) and /console/NAME (its files). */
export function serveConsole(app: FastifyInstance, directory: string | undefined): void {
  app.get('/console', (request, reply) => sendFile(directory, INDEX, request, reply));
  app.get<{ Params: { '*': string } }>('/console/*', (request, reply) => sendFile(directory, request.params['*'] || INDEX, request, reply));
}
