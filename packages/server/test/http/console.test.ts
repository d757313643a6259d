// The web console's files under /console on the app host (src/http/console.ts): found through
// @svc/console's exports map (its build must have run: turbo runs it before these tests), each
// with its content type and caching; anything else is a 404 in the service's error shape, a
// path outside the folder included; without a build, a 503 that says how to make one.
import { request } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CONSOLE_NOT_BUILT, consoleDirectory, serveConsole } from '../../src/http/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { send } from '../support/http.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness([]);
});
afterAll(() => h?.close());

/** A GET with the path exactly as given: fetch would resolve its dots and escapes first. */
function rawGet(url: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    request({ hostname, port, path, headers: { connection: 'close' } }, (answer) => {
      let body = '';
      answer.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      answer.on('end', () => resolve({ status: answer.statusCode!, body }));
    })
      .on('error', reject)
      .end();
  });
}

test('the directory is the installed @svc/console’s dist, and the server names the page on the app host', () => {
  const directory = consoleDirectory()!;
  expect(directory).toMatch(/console[/\\]dist[/\\]$/);
  expect(existsSync(join(directory, 'index.html'))).toBe(true);
  expect(h.server.consoleUrl).toBe(`${h.server.urls.app}/console/`);
});

test('/console and /console/ answer the page, revalidated on each visit and locked to its own scripts', async () => {
  for (const path of ['/console', '/console/', '/console/index.html']) {
    const page = await fetch(`${h.direct}${path}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('<title>svc console</title>');
  }
  const first = await fetch(`${h.direct}/console/`);
  const again = await fetch(`${h.direct}/console/`, { headers: { 'if-none-match': first.headers.get('etag')! } });
  expect(again.status).toBe(304);
  const head = await fetch(`${h.direct}/console/`, { method: 'HEAD' });
  expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
});

test('the script and style sheet the page names: their types, kept for a year (their names change with their content)', async () => {
  const page = await (await fetch(`${h.direct}/console/`)).text();
  const assets = [...page.matchAll(/(?:src|href)="\/console\/([^"]+\.(js|css))"/g)];
  expect(assets.map(([, , type]) => type).sort()).toEqual(['css', 'js']);
  for (const [, name, type] of assets) {
    const asset = await fetch(`${h.direct}/console/${name}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe(type === 'js' ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  }
});

test('an unknown file is a 404 in the service’s error shape; other methods are not allowed', async () => {
  for (const path of ['/console/missing.js', '/console/assets/console.js', '/console/.gitignore', '/console/package.json']) {
    const missing = await send(`${h.direct}${path}`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ code: 404, error: expect.stringContaining('No console file at /console/') });
  }
  expect((await send(`${h.direct}/console/`, { method: 'POST', body: '' })).status).toBe(404);
});

test('no path leaves the folder: dots, escaped slashes and backslashes are all 404', async () => {
  // The console's source page, next to its dist/, is a file the server would serve by its type.
  const source = ['../src/index.html', '..%2fsrc%2findex.html', '%2e%2e/src/index.html', '%2e%2e%2fsrc%2findex.html', '..%5csrc%5cindex.html', '..\\src\\index.html'];
  for (const path of [...source.map((name) => `/console/${name}`), '/console/%2fetc%2fpasswd', '/console//etc/passwd']) {
    const answer = await rawGet(h.direct, path);
    expect([path, answer.status]).toEqual([path, 404]);
    expect(answer.body).not.toContain('%SCRIPT%');
    expect(answer.body).not.toContain('root:');
  }
});

test('without a build, or without the package, the page and its files are a 503 saying how to build it', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'svc-no-console-'));
  for (const directory of [empty, undefined]) {
    const app = Fastify();
    serveConsole(app, directory);
    for (const url of ['/console', '/console/console-X.js']) {
      const answer = await app.inject({ url });
      expect(answer.statusCode).toBe(503);
      expect(answer.json()).toEqual({ code: 503, error: CONSOLE_NOT_BUILT });
    }
    await app.close();
  }
  rmSync(empty, { recursive: true });
  expect(CONSOLE_NOT_BUILT).toContain('npm run build -w @svc/console');
});
