// PostgreSQL restarted under a running server (DuckDB events, entities in PostgreSQL): while it
// is down, requests that need it are answered 503 with Retry-After in the documented shape
// (through the Prism proxy), ingestion goes on (the journal needs no database); once it is up
// again the server serves without a restart, every entity and acknowledged event still there.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type PostgresServer, startPostgres } from '../../../../../scripts/postgres/start.mjs';
import { type Harness, startHarness } from '../../support/harness.js';
import { postJson, send } from '../../support/http.js';

let postgres: PostgresServer;
let h: Harness;
const auth = () => ({ authorization: `Basic ${Buffer.from(`${h.project.api_key}:${h.project.secret_key}`).toString('base64')}` });
const call = (method: string, path: string, body?: unknown) =>
  send(`${h.proxied.app}${path}`, { method, headers: { ...auth(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
const today = () => new Date().toISOString().slice(0, 10).replace(/-/g, '');

beforeAll(async () => {
  postgres = await startPostgres();
  h = await startHarness(['app'], { postgresUrl: postgres.url });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await postgres?.stop();
});

test('PostgreSQL down: 503 with Retry-After, ingestion goes on; up again: served, nothing lost', async () => {
  const created = await call('POST', '/api/3/annotations', { label: 'Before the restart', start: '2026-11-02T10:00Z' });
  expect(created.status).toBe(200);
  expect((await postJson(`${h.server.urls.ingest}/batch`, { api_key: h.project.api_key, events: [{ event_type: 'Before', user_id: 'user-1', insert_id: 'restart-1' }] })).status).toBe(200);

  await postgres.down();
  const listed = await call('GET', '/api/3/annotations');
  expect(listed.status).toBe(503);
  expect(listed.headers.get('retry-after')).toBe('5');
  // (send() checks the body's request_id against X-Request-Id and takes it out.)
  expect(listed.body).toEqual({ code: 503, error: 'Service unavailable: its storage did not answer; send the request again in 5 s' });
  // Reporting counts its limits in PostgreSQL: it waits too.
  expect((await call('GET', `/api/2/events/segmentation?e=${encodeURIComponent('{"event_type":"Before"}')}&start=${today()}&end=${today()}`)).status).toBe(503);
  // Events are acknowledged to the journal, which needs no database.
  expect((await postJson(`${h.server.urls.ingest}/batch`, { api_key: h.project.api_key, events: [{ event_type: 'During', user_id: 'user-1', insert_id: 'restart-2' }] })).status).toBe(200);

  await postgres.up();
  // The pool connects again by itself: no restart of the server.
  await expect.poll(async () => (await call('GET', '/api/3/annotations')).status, { timeout: 20_000, interval: 250 }).toBe(200);
  expect((await call('GET', '/api/3/annotations')).body.data.map((a: { label: string }) => a.label)).toEqual(['Before the restart']);
  await h.server.store.flush();
  for (const eventType of ['Before', 'During']) {
    const counted = await call('GET', `/api/2/events/segmentation?e=${encodeURIComponent(JSON.stringify({ event_type: eventType }))}&start=${today()}&end=${today()}`);
    expect(counted.status).toBe(200);
    expect(counted.body.data.series).toEqual([[1]]);
  }
}, 120_000);
