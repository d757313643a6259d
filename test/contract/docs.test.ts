// The published HTML docs, opened in headless Chromium (Debian's package, installed by
// scripts/install.sh): the index links every group, and every operation of every bundle is
// rendered on its group's page under its summary.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { operations, loadBundles } from '@svc/openapi-validation';

const CHROMIUM = '/usr/bin/chromium';
const siteFile = (name: string) => fileURLToPath(import.meta.resolve(`@svc/specs/site/${name}`));

const slug = (tag: string) => tag.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/install.sh (apt-get install chromium)`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
});

test('the index page links every group page and bundle', async () => {
  await page.goto(`file://${siteFile('index.html')}`);
  const links = await page.$$eval('a[href]', (anchors) => anchors.map((a) => a.getAttribute('href')));
  for (const { name } of loadBundles()) {
    expect(links).toEqual(expect.arrayContaining([`${name}.html`, `${name}.yaml`, `${name}.json`]));
  }
});

for (const bundle of loadBundles()) {
  describe(`${bundle.name}.html`, () => {
    const ops = operations().filter((o) => o.bundle.name === bundle.name);

    test('opens with the API title', async () => {
      await page.goto(`file://${siteFile(`${bundle.name}.html`)}`);
      await expect(page.locator('h1').first().textContent()).resolves.toContain(bundle.doc.info.title);
    });

    for (const { op, method, path } of ops) {
      test(`renders ${op.operationId} (${method.toUpperCase()} ${path})`, async () => {
        // Redoc routes each operation as #/<tag slug>/<operationId in lower case>.
        const route = `${slug(op.tags[0])}/${String(op.operationId).toLowerCase()}`;
        await page.goto(`file://${siteFile(`${bundle.name}.html`)}#/${route}`);
        await page.locator('h2').getByText(op.summary, { exact: true }).waitFor({ timeout: 15_000 });
        await expect(page.getByText(path, { exact: true }).first().isVisible()).resolves.toBe(true);
      });
    }
  });
}
