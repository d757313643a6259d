// What every browser test file shares: a reference server holding the demo shop's data, Debian's
// Chromium, a fresh signed-out tab per test whose problems (script and console errors, a content
// security policy violation among them, failed requests, answers ≥ 400) fail the test, and
// screenshots in test/artifacts/ (git-ignored).
import { mkdirSync } from 'node:fs';
import { createAppClient, type AppClient } from '@svc/client';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { openBrowser, signIn } from '../scripts/browser.mjs';
import { startDemoServer, type DemoServer } from '../scripts/demo-server.mjs';
import { reportDate } from '../src/dates.js';

const ARTIFACTS = new URL('./artifacts/', import.meta.url);
// The page shows numbers in the reader's locale: the tests' browser is en-US.
export const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
export const percent = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });

export interface Console {
  demo: DemoServer;
  /** The API asked directly, as any client would. */
  api: AppClient<true>;
  page: Page;
  /** What the page reported while the test ran: a test ends expecting none. */
  problems: string[];
}

/** Registers the file's hooks; the fields are set once they have run. */
export function useConsole(): Console {
  const shared = { problems: [] as string[] } as unknown as Console;
  let browser: Browser;
  let context: BrowserContext;
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    shared.demo = await startDemoServer();
    shared.api = createAppClient({ ...shared.demo.keys, baseUrl: shared.demo.appUrl, throwOnError: true });
    ({ browser, context } = await openBrowser());
  });
  afterAll(async () => {
    await browser?.close();
    await shared.demo?.close();
  });
  // Each test has a tab of its own: signed out, with nothing in its session storage.
  beforeEach(async () => {
    shared.problems.length = 0;
    const page = (shared.page = await context.newPage());
    // A step that does not happen fails on its own, well within the test's time.
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => shared.problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') shared.problems.push(`console: ${message.text()}`);
    });
    page.on('requestfailed', (request) => shared.problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`));
    page.on('response', (response) => {
      if (response.status() >= 400) shared.problems.push(`${response.status()} for ${response.url()}`);
    });
    await page.goto(shared.demo.consoleUrl);
    await page.getByLabel('API key').waitFor();
  });
  afterEach(() => shared.page.close());
  return shared;
}

export const shoot = (page: Page, name: string) => page.screenshot({ path: new URL(name, ARTIFACTS).pathname, fullPage: true });

export async function signedIn({ page, demo }: Console): Promise<void> {
  await signIn(page, demo.keys);
  await page.getByRole('status').getByText('Signed in').waitFor();
}

/** The tables in `where`: caption, column headers and the text of every body cell. */
export function tables(where: Locator) {
  return where.locator('table').evaluateAll((found) =>
    (found as HTMLTableElement[]).map((table) => ({
      caption: table.caption?.textContent ?? '',
      columns: [...table.tHead!.rows[0]!.cells].map((cell) => cell.textContent),
      rows: [...table.tBodies[0]!.rows].map((row) => [...row.cells].map((cell) => cell.textContent)),
    })),
  );
}

/** The series uPlot's legends name, in `where`. */
export const legend = (where: Locator) => where.locator('.u-legend .u-series .u-label').allTextContents();

/** The date range of the form whose inputs are `PREFIX-start` and `PREFIX-end`, as the API takes it. */
export const range = async (page: Page, prefix: string) => ({
  start: reportDate(await page.locator(`#${prefix}-start`).inputValue()),
  end: reportDate(await page.locator(`#${prefix}-end`).inputValue()),
});
