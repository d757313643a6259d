// The platform's official browser SDKs, loaded by a page of another origin in headless
// Chromium (Debian's package), against this server: analytics-browser sends events with
// fetch (to /2/httpapi and /batch) and with the beacon transport (text/plain bodies), and
// experiment-js-client fetches variants with exposure tracking; the legacy amplitude-js 8.x
// uploads its form (XHR and beacon) to `/`. Every request is cross-origin,
// so each one passes CORS or the browser refuses it (and the test fails on it).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { flagFile } from '../../src/experiment/handlers.js';
import { type Harness, startHarness } from '../support/harness.js';

const CHROMIUM = '/usr/bin/chromium';
const require = createRequire(import.meta.url);
const packageFile = (name: string, file: string) => join(dirname(require.resolve(`${name}/package.json`)), file);
const SCRIPTS: Record<string, string> = {
  '/amplitude.js': packageFile('@amplitude/analytics-browser', 'lib/scripts/amplitude-min.js'),
  '/experiment.js': packageFile('@amplitude/experiment-js-client', 'dist/experiment.umd.js'),
  '/amplitude-js.js': packageFile('amplitude-js', 'amplitude.umd.min.js'),
};
/** Pages by path: the legacy SDK defines the same global as analytics-browser, so it has a page of its own. */
const PAGES: Record<string, string> = {
  '/': '<!doctype html><title>shop</title><script src="/amplitude.js"></script><script src="/experiment.js"></script>',
  '/legacy': '<!doctype html><title>legacy shop</title><script src="/amplitude-js.js"></script>',
};

let h: Harness;
let pages: Server;
let pageOrigin: string;
let browser: Browser;
let page: Page;
/** What the browser refused or reported while a test ran. */
const problems: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/install.sh (apt-get install chromium)`);
  h = await startHarness([]);
  const flags = flagFile(h.dataDir, h.project.app_id);
  mkdirSync(dirname(flags), { recursive: true });
  writeFileSync(flags, JSON.stringify([{ key: 'browser-banner', variants: { on: {} }, bucketBy: 'user_id' }, { key: 'browser-hidden', variants: { on: {} }, bucketBy: 'user_id', rollout: 0 }]));
  pages = createServer((request, response) => {
    const script = SCRIPTS[request.url ?? ''];
    if (script) return response.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(script));
    response.writeHead(200, { 'content-type': 'text/html' }).end(PAGES[request.url ?? '/'] ?? PAGES['/']);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  // localhost vs the API's 127.0.0.1: another origin.
  pageOrigin = `http://localhost:${(pages.address() as { port: number }).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  page = await browser.newPage();
  // Nothing leaves this machine: the SDKs' calls to the platform's own hosts (remote
  // configuration) are cut off in the browser, before any lookup.
  await page.route('**/*', (route) => (/^http:\/\/(localhost|127\.0\.0\.1):/.test(route.request().url()) ? route.continue() : route.abort('blockedbyclient')));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().includes('ERR_BLOCKED_BY_CLIENT')) problems.push(`console: ${message.text()}`);
  });
  page.on('requestfailed', (request) => {
    if (request.failure()?.errorText !== 'net::ERR_BLOCKED_BY_CLIENT') problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`);
  });
  await page.goto(pageOrigin);
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
  await h?.close();
});

/** The project's events of a user, once `count` have arrived (beacons are not awaited by the page). */
async function eventsOf(userId: string, count: number) {
  for (let attempt = 0; attempt < 100; attempt++) {
    const events = (await h.server.store.events(h.project.app_id)).filter((e) => e.user_id === userId);
    if (events.length >= count) return events;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${userId}: fewer than ${count} events arrived; the browser reported: ${problems.join('; ')}`);
}

for (const [name, options] of [
  ['fetch to /2/httpapi', { path: '/2/httpapi', useBatch: false, transport: 'fetch' }],
  ['fetch to /batch', { path: '/batch', useBatch: true, transport: 'fetch' }],
  ['beacon (text/plain)', { path: '/2/httpapi', useBatch: false, transport: 'beacon' }],
] as const) {
  test(`analytics-browser: track, identify and revenue with ${name}`, async () => {
    problems.length = 0;
    const userId = `browser-user-${name.replace(/\W+/g, '-')}`;
    await page.evaluate(
      async ({ serverUrl, apiKey, userId, useBatch, transport }) => {
        const sdk = (globalThis as unknown as { amplitude: any }).amplitude; // eslint-disable-line @typescript-eslint/no-explicit-any
        const client = sdk.createInstance();
        await client.init(apiKey, userId, { serverUrl, useBatch, transport, flushIntervalMillis: 50, autocapture: false, fetchRemoteConfig: false, logLevel: 0 }).promise;
        client.track('Browser Clicked', { color: 'red' });
        client.identify(new sdk.Identify().set('plan', 'pro'));
        client.revenue(new sdk.Revenue().setProductId('sku-1').setPrice(3).setQuantity(2));
        await client.flush().promise;
      },
      { serverUrl: `${h.direct}${options.path}`, apiKey: h.project.api_key, userId, useBatch: options.useBatch, transport: options.transport },
    );
    const events = await eventsOf(userId, 3);
    expect(events.find((e) => e.event_type === 'Browser Clicked')?.event_properties).toMatchObject({ color: 'red' });
    expect(events.find((e) => e.event_type === 'revenue_amount')).toMatchObject({ price: 3, quantity: 2, revenue: 6, productId: 'sku-1' });
    expect(await h.server.store.userProfile(h.project.app_id, userId)).toEqual({ plan: 'pro' });
    expect(problems).toEqual([]);
  });
}

test('experiment-js-client: variants from another origin, with exposure tracking', async () => {
  problems.length = 0;
  const userId = 'browser-experiment-user';
  const variants = await page.evaluate(
    async ({ serverUrl, deploymentKey, userId }) => {
      const experiment = (globalThis as unknown as { Experiment: any }).Experiment; // eslint-disable-line @typescript-eslint/no-explicit-any
      const client = experiment.initialize(deploymentKey, { serverUrl, flagsServerUrl: serverUrl, automaticExposureTracking: false, retryFetchOnFailure: false });
      await client.fetch({ user_id: userId }, { exposureTrackingOption: 'track' });
      return { banner: client.variant('browser-banner').key ?? null, hidden: client.variant('browser-hidden').key ?? null };
    },
    { serverUrl: h.direct, deploymentKey: h.deployment.key, userId },
  );
  // The flag no one is rolled out to answers its default variant, `off`.
  expect(variants).toEqual({ banner: 'on', hidden: 'off' });
  const events = await eventsOf(userId, 2);
  expect(events.map((e) => e.event_type)).toEqual(expect.arrayContaining(['[Experiment] Assignment', '[Experiment] Exposure']));
  expect(problems).toEqual([]);
});

for (const transport of ['http', 'beacon'] as const) {
  test(`amplitude-js 8.x (legacy form upload to /, ${transport}): events and identify are stored, and the SDK empties its queue`, async () => {
    problems.length = 0;
    const userId = `legacy-browser-user-${transport}`;
    await page.goto(`${pageOrigin}/legacy`);
    const unsent = await page.evaluate(
      async ({ apiEndpoint, apiKey, userId, transport }) => {
        const amplitude = (globalThis as unknown as { amplitude: any }).amplitude; // eslint-disable-line @typescript-eslint/no-explicit-any
        const client = amplitude.getInstance(transport);
        client.init(apiKey, userId, { apiEndpoint, forceHttps: false, transport, eventUploadThreshold: 3, saveEvents: false, includeUtm: false, includeReferrer: false });
        client.logEvent('Legacy Clicked', { color: 'blue' });
        client.identify(new amplitude.Identify().set('plan', 'legacy-pro').add('visits', 2));
        // The third event reaches the upload threshold; the SDK posts the form and, on `success`, forgets them.
        await new Promise<void>((resolve) => client.logEvent('Legacy Checkout', {}, () => resolve()));
        return client._unsentCount();
      },
      { apiEndpoint: new URL(h.direct).host, apiKey: h.project.api_key, userId, transport },
    );
    expect(unsent).toBe(0);
    const events = await eventsOf(userId, 3);
    expect(events.map((e) => e.event_type).sort()).toEqual(['$identify', 'Legacy Checkout', 'Legacy Clicked']);
    expect(events.find((e) => e.event_type === 'Legacy Clicked')).toMatchObject({ event_properties: { color: 'blue' }, platform: 'Web' });
    await h.server.store.flush();
    expect(await h.server.store.userProfile(h.project.app_id, userId)).toEqual({ plan: 'legacy-pro', visits: 2 });
    expect(problems).toEqual([]);
  });
}
