// Debian's Chromium driven by playwright-core (never a downloaded browser), and the console's
// forms filled as a person would, by their labels: for the browser tests and the screenshot.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/** A browser, and the reader's settings the tests expect (US English, UTC) for its pages. */
export async function openBrowser() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/install.sh (apt-get install chromium)`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1200, height: 820 }, acceptDownloads: true });
  return { browser, context };
}

export async function signIn(page, keys) {
  await page.getByLabel('API key').fill(keys.apiKey);
  await page.getByLabel('Secret key').fill(keys.secretKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Fills the segmentation form (the fields given) and draws the chart. */
export async function drawSegmentation(page, { event, metric, groupBy, kind = 'line' }) {
  await page.locator('#seg-event').selectOption(event);
  if (metric) await page.getByLabel('Measure').selectOption(metric);
  if (groupBy) {
    await page.locator('#seg-group-owner').selectOption(groupBy.owner);
    await page.locator('#seg-group-name').fill(groupBy.name);
  }
  await page.getByLabel(kind === 'bars' ? 'Bars' : 'Lines').check();
  await page.getByRole('button', { name: 'Draw chart' }).click();
  await page.getByRole('status').getByText('Chart drawn').waitFor();
}
