// 429 when a device or user exceeds the events-per-second threshold averaged over the
// window, or the daily limit; 400 with the throttling detail when a device keeps sending
// right after a 429 (silenced). Limits configured small so that the test runs fast.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson } from '../support/http.js';

let h: Harness;
let now = Date.now();
beforeAll(async () => {
  h = await startHarness(['ingest'], { throttle: { epsThreshold: 10, windowSeconds: 30 }, clock: () => now });
});
afterAll(() => h?.close());

const ticks = (count: number, ids: { device_id?: string; user_id?: string }) => Array.from({ length: count }, () => ({ event_type: 'Tick', ...ids }));
const upload = (count: number, ids: { device_id?: string; user_id?: string }) => postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events: ticks(count, ids) });

test('a device over the per-second threshold gets 429 with the documented body; others do not', async () => {
  // 10 events per second over 30 s: 300 events pass, 302 are 10.07 per second.
  expect((await upload(300, { device_id: 'device-busy' })).status).toBe(200);
  const refused = await upload(2, { device_id: 'device-busy' });
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({
    code: 429,
    error: 'Too many requests for some devices and users',
    eps_threshold: 10,
    throttled_devices: { 'device-busy': 10.1 },
    throttled_users: {},
    exceeded_daily_quota_devices: {},
    exceeded_daily_quota_users: {},
    throttled_events: [0, 1],
  });
  expect((await upload(5, { device_id: 'device-calm' })).status).toBe(200);
  const stored = await h.server.store.events(h.project.app_id);
  expect(stored.filter((e) => e.device_id === 'device-busy')).toHaveLength(300); // nothing of the refused request
});

test('a user over the rolling daily limit gets 429 with exceeded_daily_quota_users', async () => {
  Object.assign(h.server.ingestion.throttle.limits, { epsThreshold: 1000, dailyLimit: 25 });
  expect((await upload(20, { user_id: 'user-daily' })).status).toBe(200);
  const refused = await upload(6, { user_id: 'user-daily' });
  expect(refused.status).toBe(429);
  expect(refused.body.exceeded_daily_quota_users).toEqual({ 'user-daily': 26 });
  expect(refused.body.throttled_events).toEqual([0, 1, 2, 3, 4, 5]);
  expect((await upload(5, { user_id: 'user-daily' })).status).toBe(200);
});

test('a device that sends again within 15 seconds of a 429 is silenced: 400 with the throttling detail', async () => {
  Object.assign(h.server.ingestion.throttle.limits, { epsThreshold: 1000, dailyLimit: 25 });
  const spam = { device_id: 'device-spam' };
  const mixed = () => postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events: [...ticks(6, spam), { event_type: 'Tick', device_id: 'device-quiet' }] });
  expect((await upload(20, spam)).status).toBe(200);
  const throttled = await mixed();
  expect(throttled.status).toBe(429);
  expect(throttled.body).toMatchObject({ exceeded_daily_quota_devices: { 'device-spam': 26 }, throttled_events: [0, 1, 2, 3, 4, 5] });

  now += 5_000;
  const silenced = await mixed();
  expect(silenced.status).toBe(400);
  expect(silenced.body).toEqual({
    code: 400,
    error: 'Silenced devices: they kept sending within 15 seconds of being throttled; wait before retrying',
    eps_threshold: 1000,
    silenced_devices: ['device-spam'],
    silenced_events: [0, 1, 2, 3, 4, 5],
    exceeded_daily_quota_devices: { 'device-spam': 26 },
    throttled_devices: {},
    throttled_events: [],
  });

  now += 14_000; // 14 s after the last refusal: still silenced
  expect((await mixed()).status).toBe(400);
  now += 16_000; // waited as advised: throttled again, not silenced
  expect((await mixed()).status).toBe(429);
  now += 25 * 3_600_000; // the day's buckets have expired
  expect((await mixed()).status).toBe(200);
  const stored = await h.server.store.events(h.project.app_id);
  expect(stored.filter((e) => e.device_id === 'device-spam')).toHaveLength(26); // 20, then the 6 accepted a day later
  expect(stored.filter((e) => e.device_id === 'device-quiet')).toHaveLength(1);
});
