// Event streaming across restarts: the cursor and the batches are in the store, so events
// acknowledged before a restart — in batches still being retried, or not cut into batches
// yet — reach the webhook after it, each once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startServer, type RunningServer } from '../../src/server.js';
import { Tenancy } from '../../src/shared/tenancy.js';
import { testEngine } from '../support/harness.js';
import { send } from '../support/http.js';
import { startWebhook } from '../support/webhook.js';

const MINUTE = 60_000;
const dataDir = mkdtempSync(join(tmpdir(), 'svc-streaming-'));
const tenancy = new Tenancy(dataDir);
const project = tenancy.createProject(tenancy.createOrganization('Streaming').id, 'Streaming');
let now = Date.parse('2026-11-20T10:00:00Z');
let webhookAnswers = 500;
const webhook = await startWebhook(() => webhookAnswers);
tenancy.addStreamDestination(project.app_id, webhook.url, undefined, now);
afterAll(async () => {
  await webhook.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const engine = await testEngine();
const start = () =>
  startServer({ dataDir, host: '127.0.0.1', port: 0, clock: () => now, ...engine, streaming: { pollIntervalMs: 3_600_000, batchSize: 3, retry: { firstRetryMs: MINUTE, maxRetryMs: MINUTE, expiryMs: 3_600_000 } } });
const upload = (server: RunningServer, names: string[]) =>
  send(`${server.urls.ingest}/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: project.api_key, events: names.map((name) => ({ event_type: 'Step', user_id: 'streaming-user', insert_id: name })) }) });
const round = async (server: RunningServer) => {
  await server.store.flush();
  await server.streamer.round();
};
const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `restart-event-${from + i}`);

test('batches failing before a restart and events not streamed yet are delivered after it, each once', async () => {
  let server = await start();
  expect((await upload(server, names(0, 7))).status).toBe(200);
  await round(server);
  expect(webhook.received.map((r) => r.events.length)).toEqual([3, 3, 1]);
  // Acknowledged, then the server stops before any round sees them.
  expect((await upload(server, names(7, 12))).status).toBe(200);
  await server.close();

  webhookAnswers = 200;
  now += MINUTE;
  server = await start();
  await round(server);
  await server.close();
  expect(webhook.delivered().map((e) => e.insert_id)).toEqual(names(0, 12));
  expect(webhook.received.filter((r) => r.status === 200).map((r) => r.attempt)).toEqual([2, 2, 2, 1, 1]);
});
