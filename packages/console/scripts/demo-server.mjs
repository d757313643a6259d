// A reference server for the console's browser tests and its screenshot: a temporary data
// directory, one project, and a few hundred events of a small shop sent through the batch API,
// loaded (queryable) before it returns. The events are the same on every run, at times counted
// back from today, so that the console's default range (the last 30 days) shows them all.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAppClient, createIngestClient, uploadEvents } from '@svc/client';
import { startServer } from '@svc/server';
import { demoRecording } from './demo-recording.mjs';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** The days before today the events are spread over. */
export const DEMO_DAYS = 28;
export const FUNNEL_STEPS = ['Product Viewed', 'Added To Cart', 'Order Completed'];

/** Numbers in [0, 1) that are the same on every run: the hash of their position. */
function repeatable() {
  let position = 0;
  return () => createHash('sha256').update(String(position++)).digest().readUInt32BE(0) / 2 ** 32;
}

/** The shop's events: 120 users visiting one to three times, some going on to the cart and an order. */
export function demoEvents(now = Date.now()) {
  const next = repeatable();
  const pick = (values) => values[Math.floor(next() * values.length)];
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const events = [];
  for (let user = 0; user < 120; user++) {
    const user_id = `shopper-${String(user).padStart(3, '0')}`;
    const person = { user_id, platform: ['iOS', 'Android', 'Web'][user % 3], country: pick(['Germany', 'France', 'Japan', 'Brazil']) };
    const visits = 1 + Math.floor(next() * 3);
    for (let visit = 0; visit < visits; visit++) {
      let time = today - (1 + Math.floor(next() * DEMO_DAYS)) * DAY_MS + Math.round((8 + next() * 12) * 60 * MINUTE_MS);
      // A visit is a session, named by its start as the SDKs do (session lengths, replays).
      const session_id = time;
      const add = (event_type, event_properties) => {
        time += Math.round((1 + next() * 30) * MINUTE_MS);
        events.push({ ...person, event_type, time, session_id, event_properties, insert_id: `${user_id}-${visit}-${events.length}` });
      };
      const category = pick(['books', 'music', 'games']);
      add('Product Viewed', { category });
      if (next() < 0.5) add('Product Viewed', { category: pick(['books', 'music', 'games']) });
      if (next() < 0.55) {
        add('Added To Cart', { category });
        if (next() < 0.6) add('Order Completed', { category, price: 5 + Math.floor(next() * 40) });
      }
      if (next() < 0.3) add('Song Played', { genre: pick(['jazz', 'rock', 'pop']) });
    }
  }
  return events;
}

/** `2026-11-18T12:00Z`: an annotation's time, `days` before today at noon (UTC). */
const noon = (now, days) => `${new Date(Math.floor(now / DAY_MS) * DAY_MS - days * DAY_MS + 12 * 60 * MINUTE_MS).toISOString().slice(0, 16)}Z`;

/** The demo's annotations (a global one, drawn on the charts, and one of a saved chart) and a cohort of its buyers. */
async function addAnnotationsAndCohort(appUrl, project, events, now = Date.now()) {
  const app = createAppClient({ apiKey: project.api_key, secretKey: project.secret_key, baseUrl: appUrl, throwOnError: true });
  await app.POST('/api/3/annotations', { body: { label: 'Spring sale', start: noon(now, 10), details: 'Every book half price' } });
  await app.POST('/api/3/annotations', { body: { label: 'Checkout redesign', start: noon(now, 5), chart_id: 'k3x9v2' } });
  const buyers = [...new Set(events.filter((event) => event.event_type === 'Order Completed').map((event) => event.user_id))];
  await app.POST('/api/3/cohorts/upload', {
    body: { name: 'Buyers', app_id: project.app_id, id_type: 'BY_USER_ID', ids: buyers, owner: 'demo@example.com', published: true },
  });
}

/** The demo's recorded sessions, a minute apart: more than a page of the console's replay list. */
export const DEMO_REPLAYS = 12;

/** Sends the recordings as the session-replay SDK does (`POST /sessions/v2/track`), the last one started an hour ago. */
async function addReplays(ingest, apiKey, now = Date.now()) {
  for (let at = 0; at < DEMO_REPLAYS; at++) {
    const sessionId = now - 3_600_000 - (DEMO_REPLAYS - 1 - at) * MINUTE_MS;
    const events = demoRecording(sessionId).map((event) => JSON.stringify(event));
    await ingest.POST('/sessions/v2/track', {
      params: { query: { device_id: `demo-device-${at % 3}`, session_id: sessionId, type: 'replay' } },
      // The SDK's credentials for this operation (the client adds none to it).
      headers: { authorization: `Bearer ${apiKey}` },
      body: { version: 1, events },
    });
  }
}

/** Starts the server on a free port of 127.0.0.1 and sends it the demo events. */
export async function startDemoServer() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-console-'));
  const server = await startServer({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    loadIntervalMs: 200,
    // The engine at the server's priority: on a busy machine an idle one loads the events late.
    engineNice: 0,
    // The tests ask in a minute for more than the documented cost limits allow in five (1000).
    reportingLimits: { concurrentRequests: 5, costPerFiveMinutes: 100_000, costPerHour: 1_000_000 },
  });
  const close = async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const project = server.tenancy.createProject(server.tenancy.createOrganization('Demo shop').id, 'Shop');
    const events = demoEvents();
    const ingest = createIngestClient({ apiKey: project.api_key, baseUrl: server.urls.ingest, throwOnError: true });
    const sent = await uploadEvents(ingest, events);
    if (sent.failures.length > 0) throw new Error(`the demo events were not all accepted: ${JSON.stringify(sent.failures[0])}`);
    await server.store.flush();
    await addAnnotationsAndCohort(server.urls.app, project, events);
    await addReplays(ingest, project.api_key);
    return { server, consoleUrl: server.consoleUrl, appUrl: server.urls.app, keys: { apiKey: project.api_key, secretKey: project.secret_key }, events, close };
  } catch (error) {
    await close();
    throw error;
  }
}
