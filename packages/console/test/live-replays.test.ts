// The live view and the session replays in Chromium: an event sent during the test shows up
// live; the replay list pages as the API does; a recording fetched through its signed links
// plays to its end.
import { createIngestClient } from '@svc/client';
import { expect, test } from 'vitest';
import { RECORDING_MS } from '../scripts/demo-recording.mjs';
import { DEMO_REPLAYS } from '../scripts/demo-server.mjs';
import { shoot, signedIn, tables, useConsole } from './harness.js';

const ctx = useConsole();

test('live: an event sent while the view is open appears in it; hidden, the view asks nothing', async () => {
  await signedIn(ctx);
  // Every second instead of five: the test need not wait as long.
  await ctx.page.locator('#live').evaluate((live) => (live.dataset.pollMs = '1000'));
  await ctx.page.getByRole('link', { name: 'Live' }).click();
  await ctx.page.locator('#live-events table').waitFor();
  const [before] = await tables(ctx.page.locator('#live-events'));
  expect(before!.rows).toHaveLength(50);

  const ingest = createIngestClient({ apiKey: ctx.demo.keys.apiKey, baseUrl: ctx.demo.server.urls.ingest, throwOnError: true });
  await ingest.POST('/batch', { body: { events: [{ event_type: 'Live Test Ping', user_id: 'live-tester', time: Date.now() }] } });
  await ctx.page.locator('#live-events').getByRole('cell', { name: 'Live Test Ping' }).waitFor();
  const [after] = await tables(ctx.page.locator('#live-events'));
  expect(after!.rows[0]!.slice(1, 3)).toEqual(['Live Test Ping', 'live-tester']);
  expect(after!.rows).toHaveLength(50);
  await shoot(ctx.page, 'live.png');

  // Another view: no more export requests.
  await ctx.page.getByRole('link', { name: 'Funnel' }).click();
  const asked: string[] = [];
  ctx.page.on('request', (request) => request.url().includes('/api/2/export') && asked.push(request.url()));
  await ctx.page.waitForTimeout(2500);
  expect(asked).toEqual([]);
  expect(ctx.problems).toEqual([]);
});

test('replays: the list pages as the API does, and a recording plays to its end', async () => {
  await signedIn(ctx);
  await ctx.page.getByRole('link', { name: 'Session replays' }).click();
  await ctx.page.getByRole('status').getByText('Page 1').waitFor();
  const { data: first } = await ctx.api.GET('/api/1/session-replays', { params: { query: { sort_order: 'desc', page_size: 10 } } });
  const sessions = async () => (await tables(ctx.page.locator('#replays-list')))[0]!.rows.map((row) => row[0]);
  expect(await sessions()).toEqual(first.session_replays.map((replay) => replay.session_id));
  await ctx.page.getByRole('button', { name: 'Next page' }).click();
  await ctx.page.getByRole('status').getByText('Page 2').waitFor();
  const { data: second } = await ctx.api.GET('/api/1/session-replays', { params: { query: { sort_order: 'desc', page_size: 10, page_token: first.next_page_token! } } });
  expect(await sessions()).toEqual(second.session_replays.map((replay) => replay.session_id));
  expect(first.session_replays.length + second.session_replays.length).toBe(DEMO_REPLAYS);
  expect(await ctx.page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);

  const replay = second.session_replays[0]!;
  await ctx.page.getByRole('button', { name: `Play the replay of session ${replay.session_id}` }).click();
  await ctx.page.getByRole('status').getByText('Recording loaded').waitFor();
  await ctx.page.getByRole('button', { name: 'Play', exact: true }).click();
  await ctx.page.getByRole('status').getByText('played to its end').waitFor();
  const time = ctx.page.locator('#replay-time');
  expect(await time.getAttribute('data-finished')).toBe('true');
  expect(Number(await time.getAttribute('data-played-ms'))).toBe(RECORDING_MS);
  expect(await time.textContent()).toBe('0:03 / 0:03');
  // The recorded page's last state: the text changed at the end.
  expect(await ctx.page.frameLocator('#replay-stage iframe').locator('p').textContent()).toBe('One book in your cart.');
  await shoot(ctx.page, 'replay-finished.png');
  expect(ctx.problems).toEqual([]);
});
