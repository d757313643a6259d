// User mapping: map and unmap in every project of the organization, the lookup, and a mapped
// user counted as its global user by reporting.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { UserMappingHandlers } from '../../src/usermap/handlers.js';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';

let h: Harness;
const basic = (project: { api_key: string; secret_key: string }) => ({ authorization: `Basic ${Buffer.from(`${project.api_key}:${project.secret_key}`).toString('base64')}` });
const at = (hour: number) => Date.UTC(2026, 10, 2, hour);

/** The rate of the throttling test: the documented 1500 calls' behaviour for a 25th of the calls. */
const RATE = { calls: 60, windowSeconds: 30 };

beforeAll(async () => {
  // Time stands still: the calls of the throttling test fall in one window however slow the machine.
  const now = Date.now();
  h = await startHarness(['ingest', 'app', 'api'], { clock: () => now, userMappingRate: RATE });
  for (const project of [h.project, h.otherProject]) {
    const events = ['user-laptop', 'user-phone', 'user-alone'].map((user_id, i) => ({ event_type: 'Open', user_id, time: at(i + 1) }));
    expect((await postJson(`${h.proxied.ingest}/batch`, { api_key: project.api_key, events })).status).toBe(200);
  }
  await h.server.store.flush();
});
afterAll(() => h?.close());

const map = (mapping: unknown, apiKey = h.project.api_key) => postJson(`${h.proxied.api}/usermap`, { api_key: apiKey, mapping });
const activeUsers = async (project = h.project) => (await send(`${h.proxied.app}/api/2/users?start=20261102&end=20261102`, { headers: basic(project) })).body.data.series[0][0];
const lookup = (userIds: string, project = h.project) => send(`${h.proxied.app}/api/2/usermap?user_ids=${encodeURIComponent(userIds)}`, { headers: basic(project) });

test('a mapped user counts as its global user, in every project of the organization, until unmapped', async () => {
  expect(await activeUsers()).toBe(3);
  const applied = await map([{ user_id: 'user-phone', global_user_id: 'user-laptop' }]);
  expect(applied.body).toEqual({ code: 200, mappings_applied: 1 });
  expect(await activeUsers()).toBe(2);
  expect(await activeUsers(h.otherProject)).toBe(2);
  const { body } = await lookup('user-phone,user-laptop,user-nobody,__proto__');
  expect(body['user-phone']).toMatchObject({ mapped_from: [], mapped_to: [{ user_id: 'user-laptop', svc_id: body['user-laptop'].svc_id }] });
  expect(body['user-laptop']).toMatchObject({ mapped_from: [{ user_id: 'user-phone', svc_id: body['user-phone'].svc_id }], mapped_to: [] });
  expect(body['user-nobody']).toEqual({});
  expect(Object.keys(body)).toContain('__proto__');
  expect((await map({ user_id: 'user-phone', unmap: true }, h.otherProject.api_key)).status).toBe(200);
  expect(await activeUsers()).toBe(3);
  expect((await lookup('user-phone')).body['user-phone'].mapped_to).toEqual([]);
});

test('a user mapped before it has events joins its global user once they arrive', async () => {
  expect((await map({ user_id: 'user-later', global_user_id: 'user-alone' })).status).toBe(200);
  expect((await postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events: [{ event_type: 'Open', user_id: 'user-later', time: at(5) }] })).status).toBe(200);
  await h.server.store.flush();
  expect(await activeUsers()).toBe(3);
});

test('bad requests: self mapping 400, over 2000 mappings 413; keys: Basic or the query pair, never two different ones', async () => {
  expect((await map({ user_id: 'user-x', global_user_id: 'user-x' })).status).toBe(400);
  expect((await map(Array.from({ length: 2001 }, (_, i) => ({ user_id: `u-${i}`, global_user_id: 'g' })))).status).toBe(413);
  const query = `api_key=${h.project.api_key}&secret_key=${h.project.secret_key}`;
  expect((await send(`${h.server.urls.app}/api/2/usermap?user_ids=user-phone&${query}`)).status).toBe(200);
  expect((await send(`${h.server.urls.app}/api/2/usermap?user_ids=user-phone&${query}`, { headers: basic(h.project) })).status).toBe(200);
  expect((await send(`${h.server.urls.app}/api/2/usermap?user_ids=user-phone&${query}`, { headers: basic(h.otherProject) })).status).toBe(401);
});

test('more calls per organization than the rate allows in its window are throttled with Retry-After', async () => {
  const call = () => send(`${h.server.urls.api}/usermap`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: h.project.api_key, mapping: { user_id: 'user-r', unmap: true } }) });
  // 5 calls at a time until refused; the tests before this one made a few calls of the organization's.
  const answers: Awaited<ReturnType<typeof call>>[] = [];
  while (answers.length <= RATE.calls && answers.every((answer) => answer.status === 200)) answers.push(...(await Promise.all(Array.from({ length: 5 }, call))));
  const refused = answers.filter((answer) => answer.status !== 200);
  expect(refused.length).toBeGreaterThan(0);
  for (const answer of refused) {
    expect(answer.status).toBe(429);
    expect(answer.body).toEqual({ code: 429, error: `Too many mapping calls: at most ${RATE.calls} in ${RATE.windowSeconds} seconds per organization` });
    // Until the first counted call leaves the window: time stands still here.
    expect(Number(answer.headers.get('retry-after'))).toBe(RATE.windowSeconds);
  }
  expect(answers.length - refused.length).toBeLessThanOrEqual(RATE.calls);
  expect(answers.length - refused.length).toBeGreaterThan(RATE.calls - 10);
});

test('by default the documented rate: 1500 calls in 30 seconds per organization', async () => {
  const store = { applyUserMappings: async () => undefined, userMappings: async () => new Map() };
  const tenancy = { projects: [{ app_id: 1, org_id: 1 }] };
  const handlers = new UserMappingHandlers(store as never, tenancy as never);
  const now = Date.now();
  const call = () => handlers.createUserMappings({ caller: { project: { app_id: 1, org_id: 1 } }, body: { mapping: { user_id: 'u', unmap: true } }, receivedAt: now } as never);
  for (let i = 0; i < 1500; i++) expect((await call()).status).toBe(200);
  expect(await call()).toMatchObject({ status: 429, headers: { 'retry-after': '30' } });
});
