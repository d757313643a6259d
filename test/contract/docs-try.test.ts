// The "try it" pages (specs/site/<group>.try.html), opened from file:// in headless Chromium
// (Debian's package, installed by scripts/install.sh): a request sent from the page's console
// to the Prism mock shows the mock's answer, the page loads nothing from anywhere else, and the
// credentials typed in are not kept by the browser.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { DEFAULT_PORTS } from '@svc/mock';
import { loadBundles } from '@svc/openapi-validation';

const CHROMIUM = '/usr/bin/chromium';
const siteFile = (name: string) => fileURLToPath(import.meta.resolve(`@svc/specs/site/${name}`));
// Git-ignored (test-results/): the screenshot is an artifact for a person to look at.
const SCREENSHOTS = fileURLToPath(new URL('./test-results/', import.meta.url));
const API_KEY = 'try-it-key-5c1e07';
const SECRET_KEY = 'try-it-secret-9b24d3';
const mockUrls = inject('mockUrls');

let browser: Browser;
let page: Page;
/** Every URL the page asked for, file:// included. */
const requested: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/install.sh (apt-get install chromium)`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  // Anything but the page itself and the mock is refused, so a CDN load would fail the test.
  await page.route('**/*', (route) => {
    const url = route.request().url();
    requested.push(url);
    return url.startsWith('file://') || url.startsWith(mockUrls.app!) ? route.continue() : route.abort();
  });
});

afterAll(async () => {
  await browser?.close();
});

test('the index links every group try-it page, each offering its mock on the default port and four code samples per operation', () => {
  const index = readFileSync(siteFile('index.html'), 'utf8');
  for (const { name, hostRole, doc } of loadBundles()) {
    expect(index).toContain(`href="${name}.try.html"`);
    const html = readFileSync(siteFile(`${name}.try.html`), 'utf8');
    const mockPort = DEFAULT_PORTS[hostRole as keyof typeof DEFAULT_PORTS];
    expect(html).toContain(`"servers":[{"url":"http://127.0.0.1:${mockPort}"`);
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item as object).filter((op) => op?.operationId)).length;
    for (const label of ['curl', 'TypeScript (@svc/client)', 'Python (svc_sdk)', 'Go (svc/sdk)']) {
      expect(html.split(`"label":"${label}"`).length - 1, `${name}: ${label} samples`).toBe(operations);
    }
  }
});

// Chromium takes several seconds to load the 5 MB page on a busy 2-core machine.
test('a request sent from the annotations page reaches the mock, and its answer is shown', { timeout: 90_000 }, async () => {
  await page.goto(`file://${siteFile('annotations.try.html')}`);
  // The base URL typed in: the spec's standard server, pointed at this run's mock.
  await page.getByRole('button', { name: /127\.0\.0\.1:4011/ }).first().click();
  await page.getByRole('option', { name: '{base_url}' }).click();
  await page.getByLabel('base_url').fill(mockUrls.app!);

  await page.goto(`file://${siteFile('annotations.try.html')}#tag/annotations/POST/api/3/annotations`);
  await page.locator('button', { hasText: 'Test Request' }).first().click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('Username:', { exact: true }).click();
  await page.keyboard.type(API_KEY);
  await dialog.getByText('Password:', { exact: true }).click();
  await page.keyboard.type(SECRET_KEY);
  // Its label names the server's template (`{base_url}`); the request goes to the value typed in.
  await dialog.getByRole('button', { name: /^Send post request/ }).first().click();

  await expect.poll(() => dialog.getByText('200 OK').isVisible(), { timeout: 15_000 }).toBe(true);
  // A field of the example the mock answers with (annotations' createAnnotation 200).
  await expect(dialog.getByText('"Black Friday campaign"').last().isVisible()).resolves.toBe(true);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}docs-try-annotations.png` });

  const elsewhere = requested.filter((url) => !url.startsWith('file://'));
  expect(elsewhere.length).toBeGreaterThan(0);
  expect(elsewhere.filter((url) => !url.startsWith(`${mockUrls.app}/`))).toEqual([]);

  const kept = await page.evaluate(async () => ({
    local: JSON.stringify({ ...localStorage }),
    session: JSON.stringify({ ...sessionStorage }),
    cookie: document.cookie,
    indexedDb: (await indexedDB.databases()).map((db) => db.name),
  }));
  const cookies = JSON.stringify(await page.context().cookies());
  for (const secret of [API_KEY, SECRET_KEY, btoa(`${API_KEY}:${SECRET_KEY}`)]) {
    for (const store of [kept.local, kept.session, kept.cookie, cookies]) expect(store).not.toContain(secret);
  }
  expect(kept.indexedDb).toEqual([]);
});
