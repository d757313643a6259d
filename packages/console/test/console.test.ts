// The console in Chromium against a reference server holding the demo shop's events: signing in
// (by keyboard too), a bad key, a segmentation chart and a funnel whose tables (and CSV) hold
// exactly what the API answers for the same parameters, asked directly.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { drawSegmentation, signIn } from '../scripts/browser.mjs';
import { FUNNEL_STEPS } from '../scripts/demo-server.mjs';
import { formatDuration } from '../src/format.js';
import { count, legend, percent, range, shoot, signedIn, tables, useConsole } from './harness.js';

const ctx = useConsole();

test('a bad key: the 401 answer’s own message is shown, and nothing is kept', async () => {
  const refused = await fetch(`${ctx.demo.appUrl}/api/2/events/list`, { headers: { authorization: `Basic ${btoa(`${ctx.demo.keys.apiKey}:wrong`)}` } });
  const { error } = (await refused.json()) as { error: string };
  expect(refused.status).toBe(401);
  await signIn(ctx.page, { apiKey: ctx.demo.keys.apiKey, secretKey: 'wrong' });
  await expect.poll(() => ctx.page.getByRole('alert').textContent()).toContain(`${error} (HTTP 401)`);
  expect(await ctx.page.getByRole('alert').textContent()).toContain("Check the project's API key and secret key");
  expect(await ctx.page.locator('#segmentation').isHidden()).toBe(true);
  expect(await ctx.page.evaluate(() => sessionStorage.length)).toBe(0);
  await shoot(ctx.page, 'bad-key.png');
});

test('keyboard only: Tab reaches the keys with a visible focus ring, Enter signs in, focus moves to the view', async () => {
  const focused = () => ctx.page.evaluate(() => ({ id: document.activeElement?.id ?? '', outline: getComputedStyle(document.activeElement!).outlineStyle }));
  await ctx.page.keyboard.press('Tab');
  await ctx.page.keyboard.press('Tab');
  expect(await focused()).toEqual({ id: 'api-key', outline: 'solid' });
  await ctx.page.keyboard.type(ctx.demo.keys.apiKey);
  await ctx.page.keyboard.press('Tab');
  expect((await focused()).id).toBe('secret-key');
  await ctx.page.keyboard.type(ctx.demo.keys.secretKey);
  await ctx.page.keyboard.press('Enter');
  await ctx.page.getByRole('status').getByText('Signed in').waitFor();
  expect((await focused()).id).toBe('segmentation-title');
  // The keys are in this tab's session storage, and nowhere the server could read them back.
  expect(await ctx.page.evaluate(() => Object.values(sessionStorage).join(''))).toContain(ctx.demo.keys.secretKey);
  expect(ctx.page.url()).not.toContain(ctx.demo.keys.apiKey);
  expect(await ctx.page.context().cookies()).toEqual([]);
  expect(ctx.problems).toEqual([]);
});

test('segmentation: the table and the CSV hold the API’s answer for the same parameters', async () => {
  await signedIn(ctx);
  await ctx.page.locator('#seg-filter-name').fill('category');
  await ctx.page.locator('#seg-filter-values').fill('books, music');
  await drawSegmentation(ctx.page, { event: 'Product Viewed', metric: 'totals', groupBy: { owner: 'user', name: 'platform' }, kind: 'bars' });
  await shoot(ctx.page, 'segmentation-bars.png');

  const { data } = await ctx.api.GET('/api/2/events/segmentation', {
    params: {
      query: {
        e: { event_type: 'Product Viewed', filters: [{ subprop_type: 'event', subprop_key: 'category', subprop_op: 'is', subprop_value: ['books', 'music'] }], group_by: [{ type: 'user', value: 'platform' }] },
        m: 'totals',
        i: 1,
        limit: 10,
        ...(await range(ctx.page, 'seg')),
      },
    },
  });
  const answer = data.data;
  // The demo's events, counted here: the API's answer is the events sent.
  const sent = ctx.demo.events.filter((e) => e.event_type === 'Product Viewed' && ['books', 'music'].includes(String(e.event_properties.category)));
  expect(answer.seriesCollapsed.reduce((sum, [whole]) => sum + whole!.value, 0)).toBe(sent.length);
  const names = answer.seriesLabels.map((label) => (label as [number, string])[1]);
  expect(names.sort()).toEqual(['Android', 'Web', 'iOS']);

  const [table] = await tables(ctx.page.locator('#seg-table'));
  expect(table!.columns).toEqual(['Period', ...answer.seriesLabels.map((label) => (label as [number, string])[1])]);
  expect(table!.rows).toEqual([
    ...answer.xValues.map((period, at) => [period, ...answer.series.map((values) => count.format(values[at]!))]),
    ['Whole range', ...answer.seriesCollapsed.map(([whole]) => count.format(whole!.value))],
  ]);
  expect(await legend(ctx.page.locator('#seg-chart'))).toEqual(table!.columns.slice(1));

  const [download] = await Promise.all([ctx.page.waitForEvent('download'), ctx.page.getByRole('button', { name: 'Download CSV' }).click()]);
  const csv = readFileSync(await download.path(), 'utf8');
  expect(csv).toBe(
    [table!.columns, ...answer.xValues.map((period, at) => [period, ...answer.series.map((values) => values[at])]), ['Whole range', ...answer.seriesCollapsed.map(([whole]) => whole!.value)]]
      .map((row) => `${row.join(',')}\r\n`)
      .join(''),
  );
  expect(ctx.problems).toEqual([]);
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
  await signedIn(ctx);
  await ctx.page.getByRole('link', { name: 'Funnel' }).click();
  const pickers = ctx.page.locator('#funnel-steps select');
  await pickers.nth(0).selectOption(FUNNEL_STEPS[0]!);
  await pickers.nth(1).selectOption(FUNNEL_STEPS[1]!);
  await ctx.page.getByRole('button', { name: 'Add a step' }).click();
  // The new step's picker has the focus, as a keyboard user expects.
  expect(await ctx.page.evaluate(() => document.activeElement?.closest('li')?.textContent)).toContain('Step 3');
  await pickers.nth(2).selectOption(FUNNEL_STEPS[2]!);
  await ctx.page.getByLabel('Conversion window').fill('1');
  await ctx.page.getByRole('button', { name: 'Draw funnel' }).click();
  await ctx.page.getByRole('status').getByText('Funnel drawn').waitFor();
  await shoot(ctx.page, 'funnel.png');

  const query = { e: FUNNEL_STEPS.map((event_type) => ({ event_type })), mode: 'ordered' as const, cs: 86_400, ...(await range(ctx.page, 'funnel')) };
  const { data: whole } = await ctx.api.GET('/api/2/funnels', { params: { query } });
  const [all] = whole.data;
  expect(all!.cumulativeRaw[0]).toBeGreaterThan(all!.cumulativeRaw[2]!);
  expect(all!.cumulativeRaw[2]).toBeGreaterThan(0);
  expect(await tables(ctx.page.locator('#funnel-tables'))).toEqual([
    {
      caption: `All users: ${count.format(all!.cumulativeRaw[0]!)} users entered, ${percent.format(all!.cumulative[2]!)} completed`,
      columns: ['Step', 'Users', 'Conversion', 'From previous step', 'Median time from previous step'],
      rows: funnelRows(all!),
    },
  ]);

  await ctx.page.getByLabel('Group by user property (optional)').fill('platform');
  await ctx.page.getByRole('button', { name: 'Draw funnel' }).click();
  await ctx.page.getByRole('status').getByText('3 funnels').waitFor();
  await shoot(ctx.page, 'funnel-by-platform.png');
  const { data: grouped } = await ctx.api.GET('/api/2/funnels', { params: { query: { ...query, g: 'platform', limit: 5 } } });
  const shown = await tables(ctx.page.locator('#funnel-tables'));
  expect(shown.map((table) => table.caption.split(':')[0])).toEqual(grouped.data.map((funnel) => funnel.groupValue));
  expect(shown.map((table) => table.rows)).toEqual(grouped.data.map(funnelRows));
  expect(await legend(ctx.page.locator('#funnel-chart'))).toEqual(grouped.data.map((funnel) => funnel.groupValue));
  expect(ctx.problems).toEqual([]);
});

test('sign-out forgets the keys: the sign-in form again, also after a reload', async () => {
  await signedIn(ctx);
  await ctx.page.getByRole('button', { name: 'Sign out' }).click();
  expect(await ctx.page.evaluate(() => sessionStorage.length)).toBe(0);
  expect(await ctx.page.getByLabel('API key').isVisible()).toBe(true);
  expect(await ctx.page.locator('#segmentation').isHidden()).toBe(true);
  await ctx.page.reload();
  expect(await ctx.page.getByLabel('API key').isVisible()).toBe(true);
  expect(await ctx.page.getByRole('navigation').isHidden()).toBe(true);
});
