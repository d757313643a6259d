// The users, sessions and retention charts, the annotations on the charts' time axis, and the
// cohorts and annotations listed, in Chromium: what they show is exactly what the API answers
// for the same parameters, asked directly.
import { expect, test } from 'vitest';
import { drawSegmentation } from '../scripts/browser.mjs';
import { annotationsTable, cohortsTable } from '../src/lists.js';
import { binLabel } from '../src/users/model.js';
import { count, legend, percent, range, shoot, signedIn, tables, useConsole } from './harness.js';

const ctx = useConsole();

/** The list item of the demo's global annotation, from the API. */
async function springSale() {
  const { data } = await ctx.api.GET('/api/3/annotations');
  const global = data.data.filter((annotation) => annotation.chart_id === null);
  expect(global.map((annotation) => annotation.label)).toEqual(['Spring sale']);
  return `Spring sale: ${global[0]!.start.replace('T', ' ').replace('Z', '')} UTC`;
}

/** Draws the users view's charts, the interval chosen. */
async function drawUsers(interval: 'Daily' | 'Weekly') {
  await signedIn(ctx);
  await ctx.page.getByRole('link', { name: 'Users' }).click();
  await ctx.page.locator('#users').getByLabel('Interval').selectOption(interval);
  await ctx.page.getByRole('button', { name: 'Draw charts' }).click();
  await ctx.page.getByRole('status').getByText('Charts drawn').waitFor();
}

test('users and sessions: weekly active users and the session lengths equal the API’s answers', async () => {
  await drawUsers('Weekly');
  await shoot(ctx.page, 'users-weekly.png');

  const days = await range(ctx.page, 'users');
  const { data: users } = await ctx.api.GET('/api/2/users', { params: { query: { ...days, m: 'active', i: 7 } } });
  // Every shopper of the demo was active in the range: the whole range counts each once.
  expect(users.data.seriesCollapsed).toEqual([[new Set(ctx.demo.events.map((event) => event.user_id)).size]]);
  const [usersTable] = await tables(ctx.page.locator('#users-table'));
  expect(usersTable!.rows).toEqual([...users.data.xValues.map((period, at) => [period, count.format(users.data.series[0]![at]!)]), ['Whole range', count.format(users.data.seriesCollapsed[0]![0]!)]]);
  expect(await legend(ctx.page.locator('#users-chart'))).toEqual(['Active users']);
  expect(await ctx.page.locator('#users-annotations li').allTextContents()).toEqual([await springSale()]);

  const { data: sessions } = await ctx.api.GET('/api/2/sessions/length', { params: { query: days } });
  expect(sessions.data.series[0]!.reduce((sum, n) => sum + n, 0)).toBe(new Set(ctx.demo.events.map((event) => `${event.user_id}/${event.session_id}`)).size);
  const [sessionsTable] = await tables(ctx.page.locator('#sessions-table'));
  expect(sessionsTable!.rows).toEqual(sessions.data.xValues.map((bin, at) => [binLabel(bin), count.format(sessions.data.series[0]![at]!)]));
  expect(ctx.problems).toEqual([]);
});

test('retention: new users returning with any event, day by day, equals the API’s answer', async () => {
  await drawUsers('Daily');
  await shoot(ctx.page, 'users-daily.png');
  const { data } = await ctx.api.GET('/api/2/retention', { params: { query: { se: { event_type: '_new' }, re: { event_type: '_all' }, rm: 'nday', i: 1, ...(await range(ctx.page, 'users')) } } });
  const [retention] = data.data.series;
  type Count = { count: number; outof: number; incomplete: boolean };
  const cell = ({ count: n, outof, incomplete }: Count) => `${count.format(n)} (${percent.format(outof === 0 ? 0 : n / outof)})${incomplete ? ' *' : ''}`;
  const columns = retention!.combined.length - 1;
  const row = (header: string, cells: Count[]) => [header, count.format(cells[0]!.count), ...Array.from({ length: columns }, (_, at) => (cells[at + 1] ? cell(cells[at + 1]!) : '—'))];
  const [table] = await tables(ctx.page.locator('#retention-table'));
  expect(table!.columns).toEqual(['Cohort', 'Users', ...Array.from({ length: columns }, (_, at) => `Day ${at}`)]);
  expect(table!.rows).toEqual([row('All cohorts', retention!.combined), ...retention!.dates.map((cohort) => row(cohort, retention!.values[cohort]!))]);
  expect(retention!.combined[0]!.count).toBe(new Set(ctx.demo.events.map((event) => event.user_id)).size);
  expect(ctx.problems).toEqual([]);
});

test('annotations: the global one is drawn on the segmentation chart’s time axis and listed under it; one of a saved chart is not', async () => {
  await signedIn(ctx);
  await drawSegmentation(ctx.page, { event: 'Product Viewed' });
  await ctx.page.locator('#seg-annotations').getByText('Spring sale').waitFor();
  expect(await ctx.page.getByRole('list', { name: 'Annotations on the chart' }).locator('li').allTextContents()).toEqual([await springSale()]);
  // The dashed line's purple is on the canvas.
  const purple = await ctx.page.locator('#seg-chart canvas').evaluate((canvas: HTMLCanvasElement) => {
    const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    for (let at = 0; at < pixels.length; at += 4) if (pixels[at] === 0x7e && pixels[at + 1] === 0x22 && pixels[at + 2] === 0xce) return true;
    return false;
  });
  expect(purple).toBe(true);
  await shoot(ctx.page, 'segmentation-annotated.png');
  expect(ctx.problems).toEqual([]);
});

test('cohorts and annotations listed: the tables hold the API’s lists', async () => {
  await signedIn(ctx);
  await ctx.page.getByRole('link', { name: 'Cohorts and annotations' }).click();
  await ctx.page.getByRole('status').getByText('Listed').waitFor();
  await shoot(ctx.page, 'lists.png');
  const [{ data: cohorts }, { data: annotations }] = await Promise.all([ctx.api.GET('/api/3/cohorts'), ctx.api.GET('/api/3/annotations')]);
  expect(cohorts.cohorts.map((cohort) => cohort.size)).toEqual([new Set(ctx.demo.events.filter((e) => e.event_type === 'Order Completed').map((e) => e.user_id)).size]);
  expect(annotations.data).toHaveLength(2);
  const shown = await tables(ctx.page.locator('#lists-tables'));
  const expected = [cohortsTable(cohorts.cohorts), annotationsTable(annotations.data)];
  expect(shown).toEqual(expected.map(({ caption, columns, rows }) => ({ caption, columns, rows: rows.map(({ header, cells }) => [header, ...cells]) })));
  expect(ctx.problems).toEqual([]);
});
