// Not a test (CI never runs it): how long the console takes from page load to its first
// segmentation chart on a project of a million events, in Debian's Chromium, median of 5.
//
//   node scripts/first-chart.mjs [--data-dir DIR] [--events N]
//
// Seeds a reference server with N events (default 1,000,000: 20,000 users over the last 30
// days) through the batch API, or reuses the project a previous run left in DIR (its keys are
// kept there in first-chart-keys.json). Each of the 5 loads starts a fresh tab with the keys
// in its session storage, as after a sign-in, and draws the default chart (unique users of the
// first event type, daily, the last 30 days) as soon as the page has signed in; the time is the
// page's own clock, from navigation start to the chart's element in the page.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createIngestClient, uploadEvents } from '@svc/client';
import { startServer } from '@svc/server';
import { openBrowser } from './browser.mjs';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, events: { type: 'string', default: '1000000' } } });
const total = Number(values.events);
const dataDir = values['data-dir'] ?? mkdtempSync(join(tmpdir(), 'svc-first-chart-'));
const keysFile = join(dataDir, 'first-chart-keys.json');
const RUNS = 5;
const DAY_MS = 86_400_000;
const EVENT_TYPES = ['Product Viewed', 'Added To Cart', 'Order Completed', 'Song Played', 'Search', 'Signed In', 'Page Viewed', 'Shared', 'Rated', 'Signed Out'];

/** `count` events of 20,000 users over the last 30 days, made `chunk` at a time (the upload holds one chunk). */
function* events(count, chunk = 50_000) {
  const now = Date.now();
  for (let from = 0; from < count; from += chunk) {
    const part = [];
    for (let at = from; at < Math.min(count, from + chunk); at++) {
      const user = at % 20_000;
      part.push({
        user_id: `user-${user}`,
        event_type: EVENT_TYPES[(at * 7 + user) % EVENT_TYPES.length],
        time: now - ((at * 2_654_435_761) % (30 * DAY_MS)),
        platform: ['iOS', 'Android', 'Web'][user % 3],
        insert_id: `first-chart-${at}`,
      });
    }
    yield part;
  }
}

const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, engineNice: 0, reportingLimits: { concurrentRequests: 5, costPerFiveMinutes: 100_000, costPerHour: 1_000_000 } });
try {
  let keys = existsSync(keysFile) ? JSON.parse(readFileSync(keysFile, 'utf8')) : undefined;
  if (!keys) {
    const project = server.tenancy.createProject(server.tenancy.createOrganization('First chart').id, 'A million events');
    keys = { apiKey: project.api_key, secretKey: project.secret_key };
    const ingest = createIngestClient({ apiKey: keys.apiKey, baseUrl: server.urls.ingest });
    const started = Date.now();
    let sent = 0;
    for (const part of events(total)) {
      const { failures } = await uploadEvents(ingest, part, { concurrency: 2 });
      if (failures.length > 0) throw new Error(`events were refused: ${JSON.stringify(failures[0]).slice(0, 300)}`);
      sent += part.length;
      process.stdout.write(`\rsent ${sent.toLocaleString('en-US')} events (${Math.round((Date.now() - started) / 1000)} s)`);
    }
    await server.store.flush();
    writeFileSync(keysFile, JSON.stringify(keys));
    console.log(`\nseeded ${dataDir}`);
  }

  const { browser, context } = await openBrowser();
  const times = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      const page = await context.newPage();
      await page.addInitScript((stored) => sessionStorage.setItem('svc-console-keys', stored), JSON.stringify(keys));
      // The moment uPlot's element joins the chart's figure, on the page's clock.
      await page.addInitScript(() => {
        new MutationObserver((_changes, observer) => {
          if (document.querySelector('#seg-chart .uplot')) {
            window.firstChartMs = performance.now();
            observer.disconnect();
          }
        }).observe(document, { childList: true, subtree: true });
      });
      await page.goto(server.consoleUrl);
      await page.getByRole('status').getByText('Signed in').waitFor({ timeout: 60_000 });
      await page.getByRole('button', { name: 'Draw chart' }).click();
      await page.getByRole('status').getByText('Chart drawn').waitFor({ timeout: 60_000 });
      const ms = await page.evaluate(() => window.firstChartMs);
      times.push(ms);
      console.log(`run ${run + 1}: ${Math.round(ms)} ms`);
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const median = [...times].sort((a, b) => a - b)[Math.floor(RUNS / 2)];
  console.log(`first segmentation chart, ${total.toLocaleString('en-US')} events: median ${Math.round(median)} ms of ${RUNS} loads`);
} finally {
  await server.close();
  if (!values['data-dir']) rmSync(dataDir, { recursive: true, force: true });
}
