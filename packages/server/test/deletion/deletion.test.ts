// User deletion against the running server with a moved clock: staging jobs, removal, the
// scrub at the job's day (events, profiles, identities and the devices' session replays gone;
// reporting no longer counts the users), Done after the backups; pacing; whole-organization requests.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';

let h: Harness;
let now = Date.UTC(2026, 10, 10, 12);
const tick = () => (now += 1_000);
const basic = (project: { api_key: string; secret_key: string }) => ({ authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}` });
const at = (hour: number) => Date.UTC(2026, 10, 9, hour);
const svcIdOf = async (userId: string, project = h.project) => (await h.server.store.entities.svcIdsOfUsers(project.app_id, [userId])).get(userId)!;

beforeAll(async () => {
  h = await startHarness(['ingest', 'app'], { clock: () => now });
  for (const project of [h.project, h.otherProject]) {
    const events = ['user-del-a', 'user-del-b', 'user-del-c'].map((user_id, i) => ({ event_type: 'Open', user_id, time: at(i + 1) }));
    events.push({ event_type: '$identify', user_id: 'user-del-a', time: at(5), user_properties: { $set: { plan: 'pro' } } } as never);
    events.push({ event_type: 'Open', user_id: 'user-del-a', device_id: 'device-del-a', time: at(6) } as never);
    expect((await postJson(`${h.proxied.ingest}/batch`, { api_key: project.api_key, events })).status).toBe(200);
  }
  for (const deviceId of ['device-del-a', 'device-kept']) {
    const query = new URLSearchParams({ device_id: deviceId, session_id: String(at(6)), type: 'replay', api_key: h.project.api_key });
    const recording = { version: 2, events: [JSON.stringify({ type: 4, timestamp: at(6), data: { href: 'https://example.com/', width: 800, height: 600 } })] };
    expect((await postJson(`${h.proxied.ingest}/sessions/v2/track?${query}`, recording)).status).toBe(200);
  }
  await h.server.store.flush();
});
afterAll(() => h?.close());

const request = (body: unknown, project = h.project) => {
  tick();
  return postJson(`${h.proxied.app}/api/2/deletions/users`, body, basic(project));
};
const list = () => {
  tick();
  return send(`${h.proxied.app}/api/2/deletions/users?start_day=2026-11-10&end_day=2026-12-10`, { headers: basic(h.project) });
};
const remove = (svcId: number, day: string) => {
  tick();
  return send(`${h.proxied.app}/api/2/deletions/users/${svcId}/${day}`, { method: 'DELETE', headers: basic(h.project) });
};
const replayDevices = async () =>
  (await send(`${h.proxied.app}/api/1/session-replays`, { headers: basic(h.project) })).body.session_replays.map((replay: { device_id: string }) => replay.device_id).sort();
const activeUsers = async () => (await send(`${h.proxied.app}/api/2/users?start=20261109&end=20261109`, { headers: basic(h.project) })).body.data.series[0][0];

test('a request joins the staging job; unknown users refuse the request unless ignored (either spelling)', async () => {
  const refused = await request({ user_ids: ['user-del-a', 'user-nobody'], requester: 'dpo@example.com' });
  expect(refused.status).toBe(400);
  expect(refused.body.invalid_ids).toEqual(['user-nobody']);
  const answer = await request({ user_ids: ['user-del-a', 'user-nobody'], svc_ids: [await svcIdOf('user-del-b')], requester: 'dpo@example.com', ignore_invalid_id: true, include_mapped_user_ids: true });
  expect(answer.status).toBe(200);
  expect(answer.body).toMatchObject({ day: '2026-11-13', status: 'Staging', invalid_ids: ['user-nobody'], user_ids: ['user-del-a'] });
  expect(answer.body.svc_ids).toEqual(
    expect.arrayContaining([
      { svc_id: await svcIdOf('user-del-a'), requester: 'dpo@example.com', requested_on_day: '2026-11-10', user_id: 'user-del-a' },
      { svc_id: await svcIdOf('user-del-b'), requester: 'dpo@example.com', requested_on_day: '2026-11-10', user_id: 'user-del-b' },
    ]),
  );
  expect((await list()).body).toMatchObject([{ day: '2026-11-13', status: 'Staging' }]);
});

test('more than one request per second per project is refused with 429', async () => {
  await list();
  const again = await send(`${h.proxied.app}/api/2/deletions/users?start_day=2026-11-10&end_day=2026-12-10`, { headers: basic(h.project) });
  expect(again.status).toBe(429);
  expect(again.headers.get('retry-after')).toBe('1');
});

test('a staging job gives its users back; then the scrub removes them at the job day; Done after the backups', async () => {
  const b = await svcIdOf('user-del-b');
  expect((await remove(b, '2026-11-13')).body).toMatchObject({ svc_id: b, requested_on_day: '2026-11-10' });
  expect((await remove(b, '2026-11-13')).status).toBe(404);
  expect(await activeUsers()).toBe(3);
  expect(await replayDevices()).toEqual(['device-del-a', 'device-kept']);
  const a = await svcIdOf('user-del-a');
  now = Date.UTC(2026, 10, 13, 0, 0, 5);
  expect((await list()).body).toMatchObject([{ day: '2026-11-13', status: 'Submitted', active_scrub_done_date: '2026-11-13' }]);
  expect((await remove(a, '2026-11-13')).status).toBe(409);
  expect(await activeUsers()).toBe(2);
  expect(await replayDevices()).toEqual(['device-kept']);
  expect((await h.server.store.events(h.project.app_id)).some((e) => e.user_id === 'user-del-a')).toBe(false);
  expect(await h.server.store.userProfile(h.project.app_id, 'user-del-a')).toBeUndefined();
  expect(await svcIdOf('user-del-a', h.otherProject)).toBeDefined();
  now = Date.UTC(2026, 10, 18, 1);
  expect((await list()).body).toMatchObject([{ day: '2026-11-13', status: 'Done' }]);
  // Events arriving later start a new user.
  expect((await postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events: [{ event_type: 'Open', user_id: 'user-del-a' }] })).status).toBe(200);
  await h.server.store.flush();
  expect(await svcIdOf('user-del-a')).not.toBe(a);
});

test('delete_from_org: one job per project that holds the users, each with app', async () => {
  const answer = await request({ user_ids: ['user-del-c'], delete_from_org: true });
  expect(answer.status).toBe(200);
  expect(answer.body.map((job: { app: number }) => job.app).sort()).toEqual([h.project.app_id, h.otherProject.app_id].sort());
  expect(answer.body.every((job: { invalid_ids: unknown[] }) => job.invalid_ids.length === 0)).toBe(true);
});
