// Event streaming through a webhook receiver that fails some requests, and the delivery
// metrics summary through the Prism proxy: the figures equal what the receiver saw. The clock
// is frozen and moved by the tests; streaming rounds are driven by the tests.
import { verifyWebhook, WebhookVerificationError } from '@svc/client';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';
import { startWebhook, type Webhook } from '../support/webhook.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const T0 = Date.parse('2026-11-20T10:00:00Z');
let now = T0;
let h: Harness;
let webhook: Webhook;
let syncId: string;
let signingSecret: string;
/** When (server clock) the webhook was called for the batch that never succeeds. */
const downCalls: number[] = [];

// Each scenario is a batch of three events (batch size 3, uploaded in order).
const SCENARIOS = ['healthy', 'flaky', 'refused', 'down'] as const;
const scenarioOf = (events: Record<string, unknown>[]) => (events[0]!.event_properties as { scenario: string }).scenario;

beforeAll(async () => {
  webhook = await startWebhook((events, headers) => {
    const scenario = scenarioOf(events);
    if (scenario === 'refused') return 400;
    if (scenario === 'down') {
      downCalls.push(now);
      return 503;
    }
    if (scenario === 'flaky' && headers['x-svc-attempt'] === '1') return 500;
    return 200;
  });
  h = await startHarness(['ingest', 'app'], {
    clock: () => now,
    streaming: { pollIntervalMs: HOUR, batchSize: 3, retry: { firstRetryMs: MINUTE, maxRetryMs: 10 * MINUTE, expiryMs: 4 * HOUR } },
  });
  ({ sync_id: syncId, signing_secret: signingSecret } = h.server.tenancy.addStreamDestination(h.project.app_id, webhook.url, ['Play', 'Pause'], T0 - MINUTE) as { sync_id: string; signing_secret: string });
});
afterAll(async () => {
  await h?.close();
  await webhook?.close();
});

const basic = (project: { api_key: string; secret_key: string }) => ({ authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}` });
const summary = (query: Record<string, string>, project = h.project) =>
  send(`${h.proxied.app}/api/2/event-streaming/delivery-metrics-summary?${new URLSearchParams(query)}`, { headers: basic(project) });
const streamRound = async () => {
  await h.server.store.flush();
  await h.server.streamer.round();
};

test('accepted events of the filtered types reach the webhook in batches; failures are retried, refused or expire', async () => {
  for (const scenario of SCENARIOS) {
    const events = [0, 1, 2].map((n) => ({ event_type: n === 1 ? 'Pause' : 'Play', user_id: `user-${scenario}`, insert_id: `${scenario}-${n}`, event_properties: { scenario } }));
    expect((await postJson(`${h.proxied.ingest}/2/httpapi`, { api_key: h.project.api_key, events: [...events, { event_type: 'Hidden', user_id: 'user-hidden' }] })).status).toBe(200);
  }
  now = T0 + 2 * SECOND;
  await streamRound();
  now = T0 + 2 * SECOND + MINUTE;
  await streamRound();
  // The down batch is retried with doubling waits (1, 2, 4, 8, then 10 minutes) until it expires.
  for (let minutes = 3; minutes <= 4 * 60 + 10; minutes++) {
    now = T0 + 2 * SECOND + minutes * MINUTE;
    await streamRound();
  }

  const delivered = webhook.delivered();
  expect(delivered.map((e) => e.insert_id).sort()).toEqual(['flaky-0', 'flaky-1', 'flaky-2', 'healthy-0', 'healthy-1', 'healthy-2']);
  expect(webhook.received.every((r) => r.events.length === 3)).toBe(true);
  expect(webhook.received.flatMap((r) => r.events).some((e) => e.event_type === 'Hidden')).toBe(false);
  expect(delivered[0]).toMatchObject({ app_id: h.project.app_id, event_type: 'Play', user_id: 'user-healthy', svc_id: expect.any(Number), server_upload_time: T0, event_properties: { scenario: 'healthy' } });
  const attemptsOf = (scenario: string) => webhook.received.filter((r) => scenarioOf(r.events) === scenario).map((r) => r.attempt);
  expect(attemptsOf('healthy')).toEqual([1]);
  expect(attemptsOf('flaky')).toEqual([1, 2]);
  expect(attemptsOf('refused')).toEqual([1]);
  // Waits of 1, 2, 4, 8, then 10 minutes while the batch is younger than 4 hours; the first
  // round at or after the expiry (T0 + 4 h, rounds run at T0 + 2 s + whole minutes) tries once more.
  const waits = downCalls.slice(1).map((at, i) => (at - downCalls[i]!) / MINUTE);
  expect(waits.slice(0, 5)).toEqual([1, 2, 4, 8, 10]);
  expect(new Set(waits.slice(4, -1))).toEqual(new Set([10]));
  expect(downCalls.at(-1)).toBe(T0 + 4 * HOUR + 2 * SECOND);
  expect(attemptsOf('down')).toEqual(downCalls.map((_, i) => i + 1));
  // 250 rounds, each after a flush of the store (on ClickHouse, a load): 15-30 s on a busy 2-core machine.
}, 120_000);

test('deliveries are signed as Standard Webhooks says: its reference library and verifyWebhook accept each, the id is the same on every attempt', () => {
  expect(webhook.received.length).toBeGreaterThan(10);
  for (const { body, headers, batchId } of webhook.received) {
    const timestamp = Number(headers['webhook-timestamp']);
    expect(headers['webhook-id']).toBe(`msg_${syncId}_${batchId}`);
    expect(verifyWebhook(body, headers, signingSecret, { now: () => timestamp * 1000 })).toEqual(JSON.parse(body));
    // The reference library reads the clock itself.
    vi.setSystemTime(timestamp * 1000 + 299_000);
    try {
      expect(new StandardWebhook(signingSecret).verify(body, headers as Record<string, string>)).toEqual(JSON.parse(body));
    } finally {
      vi.useRealTimers();
    }
  }
  // Attempts of one batch: one id, each with the time it was sent.
  const down = webhook.received.filter((r) => scenarioOf(r.events) === 'down');
  expect(new Set(down.map((r) => r.headers['webhook-id'])).size).toBe(1);
  expect(down.map((r) => Number(r.headers['webhook-timestamp']) * 1000)).toEqual(downCalls.map((at) => Math.floor(at / 1000) * 1000));
  // Another secret, a changed body, or a replay beyond five minutes are refused.
  const [first] = webhook.received;
  const at = () => Number(first!.headers['webhook-timestamp']) * 1000;
  expect(() => verifyWebhook(first!.body, first!.headers, 'whsec_bm90IHRoZSBzZWNyZXQ=', { now: at })).toThrow(WebhookVerificationError);
  expect(() => verifyWebhook(first!.body.replace('Play', 'Pass'), first!.headers, signingSecret, { now: at })).toThrow(/no webhook-signature matches/);
  expect(() => verifyWebhook(first!.body, first!.headers, signingSecret, { now: () => at() + 301_000 })).toThrow(/refused as a replay/);
});

test('the summary counts what the webhook received, in the window where each fate was settled', async () => {
  const day = await summary({ sync_id: syncId, time_period: 'ONE_DAY' });
  expect(day.status).toBe(200);
  expect(day.body).toEqual({
    timePeriod: 'ONE_DAY',
    eventsDelivered: 6,
    eventsNotDelivered: 6,
    deliveryRate: 0.5,
    // Healthy events waited 2 s, flaky ones 62 s: the 95th percentile is 62 s.
    latencyInSeconds: 62,
    timePeriodStart: '2026-11-19 14:10:00.000000',
    timePeriodEnd: '2026-11-20 14:10:00.000000',
    successOnFirstAttempt: 3,
    successAfterRetry: 3,
    eventsExpired: 3,
    eventsDiscarded: 3,
  });
  const firstMinute = await summary({ sync_id: syncId, time_period: 'CUSTOM', start: '2026-11-20T10:00Z', end: '2026-11-20T11:01+01:00' });
  expect(firstMinute.body).toMatchObject({ timePeriod: 'CUSTOM', eventsDelivered: 3, successOnFirstAttempt: 3, eventsDiscarded: 3, eventsExpired: 0, latencyInSeconds: 2, timePeriodStart: '2026-11-20 10:00:00.000000', timePeriodEnd: '2026-11-20 10:01:00.000000' });
  const lastTenMinutes = await summary({ sync_id: syncId, time_period: 'TEN_MINUTES' });
  expect(lastTenMinutes.body).toMatchObject({ eventsDelivered: 0, eventsNotDelivered: 3, eventsExpired: 3, deliveryRate: 0, latencyInSeconds: null });
});

test('credentials, foreign and unknown syncs, bad windows and the look-back threshold', async () => {
  const other = h.server.tenancy.addStreamDestination(h.otherProject.app_id, webhook.url, undefined, now);
  const wrongSecret = await send(`${h.proxied.app}/api/2/event-streaming/delivery-metrics-summary?sync_id=${syncId}&time_period=ONE_DAY`, { headers: basic({ ...h.project, secret_key: 'wrong' }) });
  expect(wrongSecret.status).toBe(401);
  expect((await summary({ sync_id: other.sync_id, time_period: 'ONE_DAY' })).status).toBe(403);
  expect((await summary({ sync_id: '999999', time_period: 'ONE_DAY' })).body).toEqual({ code: 403, error: 'Sync 999999 does not belong to the organization and project of these credentials' });
  expect((await summary({ sync_id: syncId, time_period: 'CUSTOM', end: '2026-11-20T11:00Z' })).status).toBe(400);
  expect((await summary({ sync_id: syncId, time_period: 'CUSTOM', start: '2026-11-20T11:00Z', end: '2026-11-20T11:00Z' })).status).toBe(400);
  const beyond = await summary({ sync_id: syncId, time_period: 'CUSTOM', start: '2026-08-01T00:00Z', end: '2026-11-20T11:00Z' });
  expect(beyond.body).toEqual({ code: 500, error: 'start 2026-08-01T00:00Z lies beyond the look-back threshold of 90 days' });
  expect((await summary({ sync_id: syncId, time_period: 'CUSTOM', start: '2026-08-23T00:00Z', end: '2026-11-20T11:00Z' })).status).toBe(200);
});

test('12 requests per minute per project, then 429 with Retry-After until the minute has passed', async () => {
  const other = h.server.tenancy.addStreamDestination(h.otherProject.app_id, webhook.url, undefined, now);
  const ask = () => summary({ sync_id: other.sync_id, time_period: 'ONE_HOUR' }, h.otherProject);
  const statuses = [];
  for (let i = 0; i < 12; i++) statuses.push((await ask()).status);
  expect(statuses).toEqual(Array(12).fill(200));
  const refused = await ask();
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ code: 429, error: 'Rate limit exceeded: at most 12 requests per minute and 4 concurrent requests per project' });
  expect(Number(refused.headers.get('retry-after'))).toBe(60);
  expect((await summary({ sync_id: syncId, time_period: 'ONE_HOUR' })).status).toBe(200);
  now += MINUTE;
  expect((await ask()).status).toBe(200);
});
