// `/api/2/usersearch` and `/api/2/useractivity` on hand-made users: an anonymous device that
// signs in, a device merged into a known user, two users mapped into one (/usermap), a device
// two users shared, and a project beside them with a user of the same user ID. Every answer
// goes through the Prism proxy (checked against the spec). Then paging and order, the project's
// time zone, what is refused (400) or unknown (404), hostile values, the credentials (401) and
// the reporting budget both operations spend (429).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';

const at = (day: number, hour: number) => Date.UTC(2026, 2, day, hour);
const NOW = at(20, 12);
const web = { platform: 'Web', country: 'Germany' };
const ios = { platform: 'iOS', country: 'Japan' };

// In ingestion order: identities are resolved in it.
const EVENTS = [
  { event_type: 'Open', device_id: 'dev-a', time: at(1, 9), ...web },
  { event_type: 'Play', user_id: 'user-ada', device_id: 'dev-a', time: at(2, 9), app_version: '3.1', ...web },
  { event_type: '$identify', user_id: 'user-ada', device_id: 'dev-a', time: at(2, 9) + 1, user_properties: { $set: { plan: 'pro' } } },
  { event_type: 'Buy', user_id: 'user-ada', device_id: 'dev-a', time: at(3, 9), revenue: 9.5, session_id: at(3, 9), ...ios },
  { event_type: 'Open', user_id: 'user-bob', device_id: 'dev-b1', time: at(1, 10), ...web },
  { event_type: 'Open', device_id: 'dev-b2', time: at(4, 10), ...ios },
  { event_type: 'Play', user_id: 'user-bob', device_id: 'dev-b2', time: at(5, 10), ...ios },
  { event_type: 'Open', user_id: 'user-cy', device_id: 'dev-c1', time: at(6, 10), ...web },
  { event_type: 'Open', user_id: 'user-cy-global', device_id: 'dev-c2', time: at(7, 10), ...ios },
  { event_type: 'Open', user_id: 'user-dan', device_id: 'shared', time: at(8, 10), ...web },
  { event_type: 'Open', user_id: 'user-eve', device_id: 'shared', time: at(9, 10), ...web },
];

let h: Harness;
let auth: Record<string, string>;
let other: Record<string, string>;
const basic = (key: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}` });

beforeAll(async () => {
  h = await startHarness(['ingest', 'app', 'api'], { clock: () => NOW });
  auth = basic(h.project.api_key, h.project.secret_key);
  other = basic(h.otherProject.api_key, h.otherProject.secret_key);
  const upload = await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events: EVENTS });
  expect(upload.status, JSON.stringify(upload.body)).toBe(200);
  const theirs = [{ event_type: 'Open', user_id: 'user-ada', device_id: 'dev-z', time: at(1, 8), platform: 'Android' }];
  expect((await postJson(`${h.direct}/batch`, { api_key: h.otherProject.api_key, events: theirs })).status).toBe(200);
  expect((await postJson(`${h.proxied.api}/usermap`, { api_key: h.project.api_key, mapping: { user_id: 'user-cy', global_user_id: 'user-cy-global' } })).status).toBe(200);
  await h.server.store.flush();
}, 120_000);
afterAll(() => h?.close());

const search = (user: string, headers = auth) => send(`${h.proxied.app}/api/2/usersearch?user=${encodeURIComponent(user)}`, { headers });
const activity = (params: string, headers = auth) => send(`${h.proxied.app}/api/2/useractivity?${params}`, { headers });
const svcIdOf = async (user: string, headers = auth): Promise<number> => (await search(user, headers)).body.matches[0].svc_id;

describe('user search', () => {
  test('a user ID or a device ID finds the user, with their latest event’s country and platform', async () => {
    const byUserId = await search('user-ada');
    expect(byUserId.status).toBe(200);
    expect(byUserId.body).toEqual({ matches: [{ svc_id: expect.any(Number), user_id: 'user-ada', last_seen: '2026-03-03 09:00:00.000000', country: 'Japan', platform: 'iOS' }], type: 'match_user_or_device_id' });
    // The anonymous device that signed in is the same user.
    expect((await search('dev-a')).body).toEqual(byUserId.body);
  });

  test('an svc_id finds its user; a merged device’s old svc_id finds the user it was merged into', async () => {
    const bob = await svcIdOf('user-bob');
    expect((await search(String(bob))).body).toMatchObject({ matches: [{ svc_id: bob, user_id: 'user-bob', last_seen: '2026-03-05 10:00:00.000000' }], type: 'match_svc_id' });
    const merged = (await activity(`user=${bob}`)).body.userData.merged_svc_ids;
    expect(merged).toHaveLength(1);
    expect(merged[0]).not.toBe(bob);
    expect((await search(String(merged[0]))).body).toMatchObject({ matches: [{ svc_id: bob, user_id: 'user-bob' }], type: 'match_svc_id' });
    expect((await search('dev-b2')).body.matches.map((m: { svc_id: number }) => m.svc_id)).toEqual([bob]);
  });

  test('a mapped user is the user it is mapped to: one match, under that user’s svc_id', async () => {
    const global = await search('user-cy-global');
    const mapped = await search('user-cy');
    expect(mapped.body.matches).toHaveLength(1);
    expect(mapped.body.matches[0]).toEqual(global.body.matches[0]);
    expect(mapped.body.matches[0].user_id).toBe('user-cy-global');
  });

  test('a device of two users finds both, the most recently seen first', async () => {
    const answer = await search('shared');
    expect(answer.body.matches.map((m: { user_id: string }) => m.user_id)).toEqual(['user-eve', 'user-dan']);
  });

  test('the start of user IDs only when nothing matches exactly; nothing found is no_match', async () => {
    expect((await search('user-cy')).body.type).toBe('match_user_or_device_id');
    const prefix = await search('user-c');
    expect(prefix.body.type).toBe('match_user_prefix');
    expect(prefix.body.matches.map((m: { user_id: string }) => m.user_id)).toEqual(['user-cy-global']);
    expect((await search('user-d')).body.matches.map((m: { user_id: string }) => m.user_id)).toEqual(['user-dan']);
    expect((await search('zed')).body).toEqual({ matches: [], type: 'no_match' });
  });

  test('a project finds its own users only, not another project’s of the same user ID or svc_id', async () => {
    const theirs = await search('user-ada', other);
    expect(theirs.body.matches).toEqual([{ svc_id: expect.any(Number), user_id: 'user-ada', last_seen: '2026-03-01 08:00:00.000000', country: null, platform: 'Android' }]);
    expect(theirs.body.matches[0].svc_id).not.toBe(await svcIdOf('user-ada'));
    expect((await search(String(theirs.body.matches[0].svc_id))).body).toEqual({ matches: [], type: 'no_match' });
    expect((await search('dev-z')).body.type).toBe('no_match');
  });

  test('hostile texts are searched as texts; an empty, too long or NUL text is 400', async () => {
    for (const text of ["' OR '1'='1", "\\' OR 1=1 --", '%_*', 'ünïcødé 🙂', '9223372036854775808', '0', '-1', 'x'.repeat(1024)]) {
      const answer = await search(text);
      expect(answer.status, text).toBe(200);
      expect(answer.body, text).toEqual({ matches: [], type: 'no_match' });
    }
    for (const text of ['', 'x'.repeat(1025), 'a\0b']) expect((await send(`${h.server.urls.app}/api/2/usersearch?user=${encodeURIComponent(text)}`, { headers: auth })).status, JSON.stringify(text)).toBe(400);
    expect((await send(`${h.server.urls.app}/api/2/usersearch`, { headers: auth })).status).toBe(400);
  });
});

describe('user activity', () => {
  test('the user’s data: ids, devices, counts, days, revenue, the latest event’s location and the profile', async () => {
    const ada = await svcIdOf('user-ada');
    const answer = await activity(`user=${ada}`);
    expect(answer.status).toBe(200);
    expect(answer.body.userData).toEqual({
      canonical_svc_id: ada,
      merged_svc_ids: [],
      user_id: 'user-ada',
      device_ids: ['dev-a'],
      last_device_id: 'dev-a',
      num_events: 4,
      num_sessions: 1,
      first_used: '2026-03-01',
      last_used: '2026-03-03',
      purchases: 1,
      revenue: 9.5,
      country: 'Japan',
      city: null,
      region: null,
      platform: 'iOS',
      language: null,
      user_properties: { plan: 'pro' },
    });
    expect(answer.body.events.map((e: { event_type: string }) => e.event_type)).toEqual(['Buy', '$identify', 'Play', 'Open']);
    expect(answer.body.events[0]).toMatchObject({ event_time: '2026-03-03 09:00:00.000000', svc_id: ada, user_id: 'user-ada', device_id: 'dev-a', app: h.project.app_id });
    // As the Export API writes them: the user's properties, paying and start version at each event.
    expect(answer.body.events.map((e: Record<string, unknown>) => [e.event_type, e.user_properties, e.paying, e.start_version])).toEqual([
      ['Buy', { plan: 'pro' }, true, '3.1'],
      ['$identify', { plan: 'pro' }, false, '3.1'],
      ['Play', {}, false, '3.1'],
      ['Open', {}, false, '3.1'],
    ]);
  });

  test('a merged device and mapped users are answered as their user, with every svc_id’s events', async () => {
    const bob = await svcIdOf('user-bob');
    const data = (await activity(`user=${bob}`)).body;
    expect(data.userData).toMatchObject({ canonical_svc_id: bob, user_id: 'user-bob', device_ids: ['dev-b1', 'dev-b2'], num_events: 3, first_used: '2026-03-01', last_used: '2026-03-05' });
    const viaMerged = (await activity(`user=${data.userData.merged_svc_ids[0]}`)).body;
    expect(viaMerged).toEqual(data);
    const global = await svcIdOf('user-cy-global');
    const cy = (await activity(`user=${global}`)).body;
    expect(cy.userData).toMatchObject({ canonical_svc_id: global, user_id: 'user-cy-global', device_ids: ['dev-c1', 'dev-c2'], num_events: 2 });
    expect(cy.userData.merged_svc_ids).toHaveLength(1);
    expect((await activity(`user=${cy.userData.merged_svc_ids[0]}`)).body).toEqual(cy);
    expect(cy.events.map((e: { user_id: string }) => e.user_id)).toEqual(['user-cy-global', 'user-cy']);
  });

  test('offset, limit and direction page through the events', async () => {
    const ada = await svcIdOf('user-ada');
    const types = async (params: string) => (await activity(`user=${ada}&${params}`)).body.events.map((e: { event_type: string }) => e.event_type);
    expect(await types('limit=2')).toEqual(['Buy', '$identify']);
    expect(await types('limit=2&offset=2')).toEqual(['Play', 'Open']);
    expect(await types('direction=earliest')).toEqual(['Open', 'Play', '$identify', 'Buy']);
    expect(await types('direction=earliest&offset=1&limit=1')).toEqual(['Play']);
    expect(await types('offset=4')).toEqual([]);
    expect(await types('offset=2147483647')).toEqual([]);
  });

  test('first and last days are the project time zone’s', async () => {
    h.server.tenancy.setTimeZone(h.project.app_id, 'Pacific/Kiritimati');
    try {
      expect((await activity(`user=${await svcIdOf('user-ada')}`)).body.userData).toMatchObject({ first_used: '2026-03-01', last_used: '2026-03-03' });
      expect((await activity(`user=${await svcIdOf('user-eve')}`)).body.userData).toMatchObject({ first_used: '2026-03-10', last_used: '2026-03-10' });
    } finally {
      h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
    }
  });

  test('an svc_id without events in the project, another project’s included, is 404', async () => {
    const theirs = await svcIdOf('user-ada', other);
    for (const user of [theirs, 999_999_999, Number.MAX_SAFE_INTEGER]) {
      const answer = await activity(`user=${user}`);
      expect(answer.status, String(user)).toBe(404);
      expect(answer.body).toEqual({ code: 404, error: `No user with svc_id ${user} in this project` });
    }
    expect((await activity(`user=${theirs}`, other)).status).toBe(200);
  });

  test('bad parameters are 400 naming them, never a 5xx', async () => {
    const ada = await svcIdOf('user-ada');
    const refused: [string, RegExp][] = [
      ['', /user/],
      ['user=abc', /user/],
      ['user=0', /user/],
      ['user=-1', /user/],
      ['user=1.5', /user/],
      ['user=9007199254740992', /user/],
      ['user=9223372036854775808', /user/],
      ['user=47529382375175741243392', /user/],
      [`user=${ada}&limit=0`, /limit/],
      [`user=${ada}&limit=1001`, /limit/],
      [`user=${ada}&offset=-1`, /offset/],
      [`user=${ada}&offset=2147483648`, /offset/],
      [`user=${ada}&direction=sideways`, /direction/],
    ];
    for (const [params, reason] of refused) {
      const answer = await send(`${h.server.urls.app}/api/2/useractivity?${params}`, { headers: auth });
      expect(answer.status, params).toBe(400);
      expect(answer.body.error, params).toMatch(reason);
    }
  });
});

test('without credentials or with a wrong secret key: 401', async () => {
  for (const path of ['/api/2/usersearch?user=ada', '/api/2/useractivity?user=1']) {
    expect((await send(`${h.server.urls.app}${path}`)).status).toBe(401);
    expect((await send(`${h.proxied.app}${path}`, { headers: basic(h.project.api_key, 'not-the-secret') })).status).toBe(401);
  }
});

describe('limits', () => {
  let limited: Harness;
  beforeAll(async () => {
    limited = await startHarness(['app'], { clock: () => NOW, reportingLimits: { concurrentRequests: 5, costPerFiveMinutes: 3, costPerHour: 1_000_000 } });
  }, 120_000);
  afterAll(() => limited?.close());

  test('each request costs 1 of the reporting budget: past it, 429 naming the limit', async () => {
    const headers = basic(limited.project.api_key, limited.project.secret_key);
    const lookup = (path: string) => send(`${limited.server.urls.app}${path}`, { headers });
    expect((await lookup('/api/2/usersearch?user=user-ada')).status).toBe(200);
    expect((await lookup('/api/2/useractivity?user=1')).status).toBe(404);
    expect((await lookup('/api/2/usersearch?user=user-bob')).status).toBe(200);
    for (const path of ['/api/2/usersearch?user=user-ada', '/api/2/useractivity?user=1']) {
      const refused = await lookup(path);
      expect(refused.status, path).toBe(429);
      expect(refused.body).toMatchObject({ code: 429, exceeded_limit: 'concurrent_cost' });
      expect(refused.body.error).toMatch(/costs 1;/);
    }
  });
});
