// The platform's official session-replay browser SDK, loaded by a page of another origin in
// headless Chromium (Debian's package), records the page and sends its batches (fetch, gzip
// when the browser compresses, Authorization: Bearer) to this server's ingest host; the
// recording is then listed and downloaded with the typed client. Every request is
// cross-origin, so each one passes CORS or the browser refuses it.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createAppClient, downloadReplay, listReplays } from '@svc/client';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from './support/harness.js';

const CHROMIUM = '/usr/bin/chromium';
const require = createRequire(import.meta.url);
const SDK = join(dirname(require.resolve('@amplitude/session-replay-browser/package.json')), 'lib/scripts/session-replay-browser-min.js');

let h: Harness;
let pages: Server;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/install.sh (apt-get install chromium)`);
  h = await startHarness(['app']);
  pages = createServer((request, response) => {
    if (request.url === '/session-replay.js') return response.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(SDK));
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>shop</title><h1>Checkout</h1><button id="pay">Pay</button><script src="/session-replay.js"></script>');
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
  await h?.close();
});

test('session-replay-browser records a page of another origin; the typed client downloads the recording', async () => {
  const page = await browser.newPage();
  const problems: string[] = [];
  // Nothing leaves this machine: the SDK's calls to the platform's own hosts (remote configuration) are cut off.
  await page.route('**/*', (route) => (/^http:\/\/(localhost|127\.0\.0\.1):/.test(route.request().url()) ? route.continue() : route.abort('blockedbyclient')));
  page.on('requestfailed', (request) => {
    if (request.failure()?.errorText !== 'net::ERR_BLOCKED_BY_CLIENT') problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`);
  });
  // localhost vs the API's 127.0.0.1: another origin.
  await page.goto(`http://localhost:${(pages.address() as { port: number }).port}`);
  const sessionId = Date.now();
  await page.evaluate(
    async ({ apiKey, trackServerUrl, sessionId }) => {
      const sdk = (window as unknown as { sessionReplay: { init(key: string, options: object): { promise: Promise<void> } } }).sessionReplay;
      await sdk.init(apiKey, { deviceId: 'browser-device', sessionId, sampleRate: 1, trackServerUrl, storeType: 'memory' }).promise;
    },
    { apiKey: h.project.api_key, trackServerUrl: `${h.direct}/sessions/v2/track`, sessionId },
  );
  await page.click('#pay');
  await page.evaluate(() => (window as unknown as { sessionReplay: { flush(useRetry: boolean): Promise<void> } }).sessionReplay.flush(false));

  const client = createAppClient({ apiKey: h.project.api_key, secretKey: h.project.secret_key, baseUrl: h.proxied.app });
  const replayId = `browser-device/${sessionId}`;
  await expect.poll(async () => (await Array.fromAsync(listReplays(client))).map((r) => r.replay_id), { timeout: 20_000 }).toContain(replayId);
  const events = await downloadReplay(client, replayId);
  // The recording starts with the page's meta event and full snapshot, as rrweb writes them.
  expect(events.map((e) => e.type).slice(0, 2)).toEqual([4, 2]);
  expect(JSON.stringify(events)).toContain('Checkout');
  expect(problems).toEqual([]);
  await page.close();
});
