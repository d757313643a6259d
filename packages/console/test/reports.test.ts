// The users, sessions and retention charts in Chromium: their tables hold exactly what the API
// answers for the same parameters, asked directly.
import { expect, test } from 'vitest';
import { binLabel } from '../src/users/model.js';
import { count, legend, percent, range, shoot, signedIn, tables, useConsole } from './harness.js';

const ctx = useConsole();

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
