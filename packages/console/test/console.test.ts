// The console in Chromium against a reference server holding the demo shop's events: signing in
// (by keyboard too), a bad key, a segmentation chart and a funnel whose tables (and CSV) hold
// exactly what the API answers for the same parameters, asked directly. Screenshots go to
// test/artifacts/ (git-ignored).
import { mkdirSync, readFileSync } from 'node:fs';
import { createAppClient, type AppClient } from '@svc/client';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { drawSegmentation, openBrowser, signIn } from '../scripts/browser.mjs';
import { FUNNEL_STEPS, startDemoServer, type DemoServer } from '../scripts/demo-server.mjs';
import { reportDate } from '../src/dates.js';
import { formatDuration } from '../src/format.js';

const ARTIFACTS = new URL('./artifacts/', import.meta.url);
// The page shows numbers in the reader's locale: the tests' browser is en-US.
const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const percent = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });

let demo: DemoServer;
let api: AppClient<true>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** What the page reported while a test ran: script and console errors, failed requests, answers ≥ 400. */
const problems: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  demo = await startDemoServer();
  api = createAppClient({ ...demo.keys, baseUrl: demo.appUrl, throwOnError: true });
  ({ browser, context } = await openBrowser());
});
afterAll(async () => {
  await browser?.close();
  await demo?.close();
});
// Each test has a tab of its own: signed out, with nothing in its session storage.
beforeEach(async () => {
  problems.length = 0;
  page = await context.newPage();
  // A step that does not happen fails on its own, well within the test's time.
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  // A content security policy violation (say, an inline style) is reported on the console.
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
  });
  await page.goto(demo.consoleUrl);
  await page.getByLabel('API key').waitFor();
});
afterEach(() => page.close());

const shoot = (name: string) => page.screenshot({ path: new URL(name, ARTIFACTS).pathname, fullPage: true });

async function signedIn(): Promise<void> {
  await signIn(page, demo.keys);
  await page.getByRole('status').getByText('Signed in').waitFor();
}

/** The tables in `where`: caption, column headers and the text of every body cell. */
function tables(where: Locator) {
  return where.locator('table').evaluateAll((found) =>
    (found as HTMLTableElement[]).map((table) => ({
      caption: table.caption?.textContent ?? '',
      columns: [...table.tHead!.rows[0]!.cells].map((cell) => cell.textContent),
      rows: [...table.tBodies[0]!.rows].map((row) => [...row.cells].map((cell) => cell.textContent)),
    })),
  );
}

/** The series uPlot's legend names. */
const legend = () => page.locator('.u-legend .u-series .u-label').allTextContents();
const range = async (prefix: string) => ({ start: reportDate(await page.locator(`#${prefix}-start`).inputValue()), end: reportDate(await page.locator(`#${prefix}-end`).inputValue()) });

test('a bad key: the 401 answer’s own message is shown, and nothing is kept', async () => {
  const refused = await fetch(`${demo.appUrl}/api/2/events/list`, { headers: { authorization: `Basic ${btoa(`${demo.keys.apiKey}:wrong`)}` } });
  const { error } = (await refused.json()) as { error: string };
  expect(refused.status).toBe(401);
  await signIn(page, { apiKey: demo.keys.apiKey, secretKey: 'wrong' });
  await expect.poll(() => page.getByRole('alert').textContent()).toContain(`${error} (HTTP 401)`);
  expect(await page.getByRole('alert').textContent()).toContain("Check the project's API key and secret key");
  expect(await page.locator('#segmentation').isHidden()).toBe(true);
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  await shoot('bad-key.png');
});

test('keyboard only: Tab reaches the keys with a visible focus ring, Enter signs in, focus moves to the view', async () => {
  const focused = () => page.evaluate(() => ({ id: document.activeElement?.id ?? '', outline: getComputedStyle(document.activeElement!).outlineStyle }));
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  expect(await focused()).toEqual({ id: 'api-key', outline: 'solid' });
  await page.keyboard.type(demo.keys.apiKey);
  await page.keyboard.press('Tab');
  expect((await focused()).id).toBe('secret-key');
  await page.keyboard.type(demo.keys.secretKey);
  await page.keyboard.press('Enter');
  await page.getByRole('status').getByText('Signed in').waitFor();
  expect((await focused()).id).toBe('segmentation-title');
  // The keys are in this tab's session storage, and nowhere the server could read them back.
  expect(await page.evaluate(() => Object.values(sessionStorage).join(''))).toContain(demo.keys.secretKey);
  expect(page.url()).not.toContain(demo.keys.apiKey);
  expect(await page.context().cookies()).toEqual([]);
  expect(problems).toEqual([]);
});

test('segmentation: the table and the CSV hold the API’s answer for the same parameters', async () => {
  await signedIn();
  await page.locator('#seg-filter-name').fill('category');
  await page.locator('#seg-filter-values').fill('books, music');
  await drawSegmentation(page, { event: 'Product Viewed', metric: 'totals', groupBy: { owner: 'user', name: 'platform' }, kind: 'bars' });
  await shoot('segmentation-bars.png');

  const { data } = await api.GET('/api/2/events/segmentation', {
    params: {
      query: {
        e: { event_type: 'Product Viewed', filters: [{ subprop_type: 'event', subprop_key: 'category', subprop_op: 'is', subprop_value: ['books', 'music'] }], group_by: [{ type: 'user', value: 'platform' }] },
        m: 'totals',
        i: 1,
        limit: 10,
        ...(await range('seg')),
      },
    },
  });
  const answer = data.data;
  // The demo's events, counted here: the API's answer is the events sent.
  const sent = demo.events.filter((e) => e.event_type === 'Product Viewed' && ['books', 'music'].includes(String(e.event_properties.category)));
  expect(answer.seriesCollapsed.reduce((sum, [whole]) => sum + whole!.value, 0)).toBe(sent.length);
  const names = answer.seriesLabels.map((label) => (label as [number, string])[1]);
  expect(names.sort()).toEqual(['Android', 'Web', 'iOS']);

  const [table] = await tables(page.locator('#seg-table'));
  expect(table!.columns).toEqual(['Period', ...answer.seriesLabels.map((label) => (label as [number, string])[1])]);
  expect(table!.rows).toEqual([
    ...answer.xValues.map((period, at) => [period, ...answer.series.map((values) => count.format(values[at]!))]),
    ['Whole range', ...answer.seriesCollapsed.map(([whole]) => count.format(whole!.value))],
  ]);
  expect(await legend()).toEqual(table!.columns.slice(1));

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  const csv = readFileSync(await download.path(), 'utf8');
  expect(csv).toBe(
    [table!.columns, ...answer.xValues.map((period, at) => [period, ...answer.series.map((values) => values[at])]), ['Whole range', ...answer.seriesCollapsed.map(([whole]) => whole!.value)]]
      .map((row) => `${row.join(',')}\r\n`)
      .join(''),
  );
  expect(problems).toEqual([]);
});

/** The rows a funnel's table must have: the answer's numbers, formatted. */
const funnelRows = (funnel: { cumulativeRaw: number[]; cumulative: number[]; stepByStep: number[]; medianTransTimes: number[] }) =>
  FUNNEL_STEPS.map((step, at) => [
    `${at + 1}. ${step}`,
    count.format(funnel.cumulativeRaw[at]!),
    percent.format(funnel.cumulative[at]!),
    at === 0 ? '—' : percent.format(funnel.stepByStep[at]!),
    at === 0 || funnel.cumulativeRaw[at] === 0 ? '—' : formatDuration(funnel.medianTransTimes[at]!),
  ]);

test('funnel of three steps: the step table holds the API’s answer; grouped, one funnel and one series per group', async () => {
  await signedIn();
  await page.getByRole('link', { name: 'Funnel' }).click();
  const pickers = page.locator('#funnel-steps select');
  await pickers.nth(0).selectOption(FUNNEL_STEPS[0]!);
  await pickers.nth(1).selectOption(FUNNEL_STEPS[1]!);
  await page.getByRole('button', { name: 'Add a step' }).click();
  // The new step's picker has the focus, as a keyboard user expects.
  expect(await page.evaluate(() => document.activeElement?.closest('li')?.textContent)).toContain('Step 3');
  await pickers.nth(2).selectOption(FUNNEL_STEPS[2]!);
  await page.getByLabel('Conversion window').fill('1');
  await page.getByRole('button', { name: 'Draw funnel' }).click();
  await page.getByRole('status').getByText('Funnel drawn').waitFor();
  await shoot('funnel.png');

  const query = { e: FUNNEL_STEPS.map((event_type) => ({ event_type })), mode: 'ordered' as const, cs: 86_400, ...(await range('funnel')) };
  const { data: whole } = await api.GET('/api/2/funnels', { params: { query } });
  const [all] = whole.data;
  expect(all!.cumulativeRaw[0]).toBeGreaterThan(all!.cumulativeRaw[2]!);
  expect(all!.cumulativeRaw[2]).toBeGreaterThan(0);
  expect(await tables(page.locator('#funnel-tables'))).toEqual([
    {
      caption: `All users: ${count.format(all!.cumulativeRaw[0]!)} users entered, ${percent.format(all!.cumulative[2]!)} completed`,
      columns: ['Step', 'Users', 'Conversion', 'From previous step', 'Median time from previous step'],
      rows: funnelRows(all!),
    },
  ]);

  await page.getByLabel('Group by user property (optional)').fill('platform');
  await page.getByRole('button', { name: 'Draw funnel' }).click();
  await page.getByRole('status').getByText('3 funnels').waitFor();
  await shoot('funnel-by-platform.png');
  const { data: grouped } = await api.GET('/api/2/funnels', { params: { query: { ...query, g: 'platform', limit: 5 } } });
  const shown = await tables(page.locator('#funnel-tables'));
  expect(shown.map((table) => table.caption.split(':')[0])).toEqual(grouped.data.map((funnel) => funnel.groupValue));
  expect(shown.map((table) => table.rows)).toEqual(grouped.data.map(funnelRows));
  expect(await legend()).toEqual(grouped.data.map((funnel) => funnel.groupValue));
  expect(problems).toEqual([]);
});

test('sign-out forgets the keys: the sign-in form again, also after a reload', async () => {
  await signedIn();
  await page.getByRole('button', { name: 'Sign out' }).click();
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  expect(await page.getByLabel('API key').isVisible()).toBe(true);
  expect(await page.locator('#segmentation').isHidden()).toBe(true);
  await page.reload();
  expect(await page.getByLabel('API key').isVisible()).toBe(true);
  expect(await page.getByRole('navigation').isHidden()).toBe(true);
});
