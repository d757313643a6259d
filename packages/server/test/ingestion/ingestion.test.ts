// Doc 002's ingestion rules against the running server, every answer through Prism.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postForm, postJson, send } from '../support/http.js';

let h: Harness;
let ingest: string;

beforeAll(async () => {
  h = await startHarness(['ingest']);
  ingest = h.proxied.ingest!;
});
afterAll(() => h?.close());

const stored = (appId = h.project.app_id) => h.server.store.events(appId);
const upload = (events: unknown[], extra: Record<string, unknown> = {}, path = '/batch') => postJson(`${ingest}${path}`, { api_key: h.project.api_key, events, ...extra });

describe('accepted uploads', () => {
  test('answers 200 with the documented body and stores the events with the derived fields', async () => {
    const before = Date.now();
    const answer = await upload([
      { event_type: 'Song Played', user_id: 'user-derived-1', event_properties: { genre: 'jazz' }, ip: '$remote' },
      { event_type: 'Purchase', device_id: 'device-00001', price: 2.5, quantity: 3, revenue: 100, time: 1_700_000_000_000 },
      { event_type: 'Refund', device_id: 'device-00001', revenue: -4 },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ code: 200, events_ingested: 3 });
    expect(answer.body.payload_size_bytes).toBeGreaterThan(100);
    expect(answer.body.server_upload_time).toBeGreaterThanOrEqual(before);
    const events = (await stored()).filter((e) => ['Song Played', 'Purchase', 'Refund'].includes(e.event_type));
    expect(events).toHaveLength(3);
    const [played, purchase, refund] = events;
    // The first 32 hex digits of the user_id's SHA-256: stored ids must not change across versions.
    expect(played!.device_id).toBe('814c2a17df449e9d3161ab020488d297');
    expect(played!.time).toBe(answer.body.server_upload_time);
    expect(played!.ip).toBe('127.0.0.1');
    expect(played!.event_properties).toEqual({ genre: 'jazz' });
    expect(purchase!.revenue).toBe(7.5); // price × quantity wins over the sent revenue
    expect(purchase!.time).toBe(1_700_000_000_000);
    expect(refund!.revenue).toBe(-4);
  });

  test('/2/httpapi answers like /batch, and `//` in the path is normalized', async () => {
    const body = JSON.stringify({ api_key: h.project.api_key, events: [{ event_type: 'Via HTTP API', user_id: 'user-httpapi' }] });
    const answer = await send(`${h.direct}//2/httpapi`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ code: 200, events_ingested: 1 });
    expect((await stored()).some((e) => e.event_type === 'Via HTTP API')).toBe(true);
  });

  test('groups beyond 5 group types and 10 groups are not tracked; the event is', async () => {
    const groups = { t1: ['a', 'b', 'c'], t2: ['d', 'e', 'f'], t3: ['g', 'h', 'i'], t4: ['j', 'k'], t5: 'l', t6: 'm' };
    expect((await upload([{ event_type: 'Grouped', user_id: 'user-groups', groups }])).status).toBe(200);
    const event = (await stored()).find((e) => e.event_type === 'Grouped')!;
    expect(event.groups).toEqual({ t1: ['a', 'b', 'c'], t2: ['d', 'e', 'f'], t3: ['g', 'h', 'i'], t4: ['j'] });
  });

  test('a gzip body is accepted; one that inflates beyond the limit gets 413', async () => {
    const body = JSON.stringify({ api_key: h.project.api_key, events: [{ event_type: 'Gzipped', user_id: 'user-gzip1' }] });
    const gz = (text: string) => ({ method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(text) });
    const answer = await send(`${h.direct}/batch`, gz(body));
    expect(answer.status).toBe(200);
    expect((await stored()).some((e) => e.event_type === 'Gzipped')).toBe(true);
    const bomb = JSON.stringify({ api_key: h.project.api_key, events: [{ event_type: 'x', user_id: 'user-bomb1', event_properties: { pad: ' '.repeat(21 * 1024 * 1024) } }] });
    const refused = await send(`${h.direct}/batch`, gz(bomb));
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({ code: 413, error: 'Payload too large' });
  });
});

describe('refused uploads (nothing stored)', () => {
  test('a missing api_key or events is named in missing_field', async () => {
    const noKey = await postJson(`${ingest}/batch`, { events: [{ event_type: 'x', user_id: 'user-nokey' }] });
    expect(noKey.status).toBe(400);
    expect(noKey.body).toEqual({ code: 400, error: 'Request missing required field', missing_field: 'api_key' });
    const noEvents = await postJson(`${ingest}/batch`, { api_key: h.project.api_key });
    expect(noEvents.body).toEqual({ code: 400, error: 'Request missing required field', missing_field: 'events' });
  });

  test('an unknown api_key gets 400', async () => {
    const answer = await postJson(`${ingest}/batch`, { api_key: 'not-a-key-of-this-server', events: [{ event_type: 'x', user_id: 'user-unknown' }] });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ code: 400, error: 'Invalid API key' });
  });

  test('events with missing and invalid fields are listed by index', async () => {
    const count = (await stored()).length;
    const answer = await upload([
      { user_id: 'user-ok-000' },
      { event_type: 'no ids' },
      { event_type: 'ok', user_id: 'user-fine' },
      { event_type: 'short', user_id: 'abc' },
      { event_type: 'bad time', user_id: 'user-fine', time: 'yesterday' },
      { event_type: 'bad currency', user_id: 'user-fine', currency: 'eur' },
    ]);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      code: 400,
      error: 'Request missing required field',
      events_with_missing_fields: { event_type: [0], user_id: [1], device_id: [1] },
      events_with_invalid_fields: { user_id: [3], time: [4], currency: [5] },
    });
    expect((await stored()).length).toBe(count);
  });

  test('min_id_length defaults to 5 and follows options.min_id_length', async () => {
    const short = await upload([{ event_type: 'short ids', user_id: 'abcd', device_id: 'dev' }]);
    expect(short.body).toEqual({ code: 400, error: 'Request has events with invalid fields', events_with_invalid_fields: { user_id: [0], device_id: [0] } });
    const allowed = await upload([{ event_type: 'short ids', user_id: 'abcd', device_id: 'dev' }], { options: { min_id_length: 3 } });
    expect(allowed.status).toBe(200);
  });

  test('properties nested deeper than 40 are invalid; 40 is fine', async () => {
    const nest = (depth: number): Record<string, unknown> => (depth === 1 ? { leaf: 1 } : { next: nest(depth - 1) });
    expect((await upload([{ event_type: 'deep', user_id: 'user-deep1', event_properties: nest(40) }])).status).toBe(200);
    const deep = await upload([{ event_type: 'deeper', user_id: 'user-deep1', user_properties: nest(41) }]);
    expect(deep.body).toEqual({ code: 400, error: 'Request has events with invalid fields', events_with_invalid_fields: { user_properties: [0] } });
  });

  test('more than 2000 events get 413', async () => {
    const events = Array.from({ length: 2001 }, (_, i) => ({ event_type: 'many', device_id: `device-${i}` }));
    const answer = await upload(events);
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ code: 413, error: 'Payload too large: at most 2000 events per request' });
  });

  test('a body over 20 MB gets 413', async () => {
    const body = JSON.stringify({ api_key: h.project.api_key, events: [{ event_type: 'huge', user_id: 'user-huge1', event_properties: { pad: 'x'.repeat(20 * 1024 * 1024) } }] });
    const answer = await send(`${h.direct}/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ code: 413, error: 'Payload too large' });
  });
});

describe('insert_id deduplication', () => {
  test('an insert_id seen before is counted but stored once, also under concurrent retries', async () => {
    const batch = [
      { event_type: 'Dedupe', user_id: 'user-dedupe', insert_id: 'dedupe-1' },
      { event_type: 'Dedupe', user_id: 'user-dedupe', insert_id: 'dedupe-2' },
      { event_type: 'Dedupe', user_id: 'user-dedupe', insert_id: 'dedupe-2' },
    ];
    const answers = await Promise.all(Array.from({ length: 6 }, () => upload(batch)));
    for (const answer of answers) expect(answer.body).toMatchObject({ code: 200, events_ingested: 3 });
    expect((await upload(batch)).status).toBe(200);
    const events = (await stored()).filter((e) => e.event_type === 'Dedupe');
    expect(events.map((e) => e.insert_id).sort()).toEqual(['dedupe-1', 'dedupe-2']);
  });

  test('insert_ids are per project, and a project sees only its own events', async () => {
    const event = { event_type: 'Other project', user_id: 'user-other', insert_id: 'dedupe-1' };
    const answer = await postJson(`${ingest}/batch`, { api_key: h.otherProject.api_key, events: [event] });
    expect(answer.status).toBe(200);
    const others = await stored(h.otherProject.app_id);
    expect(others.map((e) => e.event_type)).toEqual(['Other project']);
    expect((await stored()).some((e) => e.event_type === 'Other project')).toBe(false);
  });

  test('the window survives a restart (rebuilt from the store)', async () => {
    await h.server.store.flush();
    const appId = h.project.app_id;
    h.server.ingestion.insertIds.delete(appId, 'dedupe-1');
    await h.server.ingestion.rebuildInsertIds(Date.now());
    expect(h.server.ingestion.insertIds.has(appId, 'dedupe-1')).toBe(true);
  });
});

test('--insert-id-window-hours: a repeat after a shorter window is a new event, on every engine (the ClickHouse load checks the same window)', async () => {
  let now = Date.UTC(2026, 10, 20, 12);
  const windowed = await startHarness(['ingest'], { rules: { insertIdWindowMs: 3_600_000 }, clock: () => now });
  try {
    const send = () => postJson(`${windowed.direct}/batch`, { api_key: windowed.project.api_key, events: [{ event_type: 'Windowed', user_id: 'user-windowed', insert_id: 'windowed-1' }] });
    const kept = async () => (await windowed.server.store.events(windowed.project.app_id)).filter((e) => e.event_type === 'Windowed').length;
    expect((await send()).status).toBe(200);
    now += 30 * 60_000;
    expect((await send()).status).toBe(200);
    await windowed.server.store.flush();
    expect(await kept()).toBe(1);
    // Two hours on, once the minute's prune has run: remembered no more.
    now += 90 * 60_000;
    windowed.server.ingestion.prune(now);
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    await windowed.server.store.flush();
    expect(await kept()).toBe(2);
  } finally {
    await windowed.close();
  }
});

describe('profiles', () => {
  test('$identify applies $set, $setOnce, $add, $append, $prepend and $unset to the user profile', async () => {
    const identify = (user_properties: Record<string, unknown>) => ({ event_type: '$identify', user_id: 'user-profile', user_properties });
    const answer = await upload([
      identify({ $set: { plan: 'free', gone: 1 }, $setOnce: { first_seen: 'mon' }, $add: { logins: 2 }, $append: { tags: 'a' } }),
      identify({ $set: { plan: 'pro' }, $setOnce: { first_seen: 'tue' }, $add: { logins: 3 }, $append: { tags: ['b'] }, $prepend: { tags: 'z' }, $unset: { gone: '-' } }),
      identify({ city: 'Berlin' }),
    ]);
    expect(answer.status).toBe(200);
    expect(await h.server.store.userProfile(h.project.app_id, 'user-profile')).toEqual({
      plan: 'pro',
      first_seen: 'mon',
      logins: 5,
      tags: ['z', 'a', 'b'],
      city: 'Berlin',
    });
  });

  test('beyond the hourly limit of profile updates the events are stored but the profile keeps still', async () => {
    const limits = h.server.ingestion.propertyUpdates.limits;
    const saved = limits.perHour;
    limits.perHour = 3;
    try {
      const login = (user_id: string) => ({ event_type: '$identify', user_id, user_properties: { $add: { logins: 1 } } });
      const answer = await upload([...Array.from({ length: 5 }, () => login('user-eager')), login('user-calm')]);
      expect(answer.status).toBe(200);
      expect(answer.body.events_ingested).toBe(6);
      expect(await h.server.store.userProfile(h.project.app_id, 'user-eager')).toEqual({ logins: 3 });
      expect(await h.server.store.userProfile(h.project.app_id, 'user-calm')).toEqual({ logins: 1 });
      const eager = (await stored()).filter((e) => e.user_id === 'user-eager');
      expect(eager.map((e) => e.skip_user_properties_sync)).toEqual([false, false, false, true, true]);
      expect((await upload([login('user-eager')])).status).toBe(200);
      expect(await h.server.store.userProfile(h.project.app_id, 'user-eager')).toEqual({ logins: 3 });
    } finally {
      limits.perHour = saved;
    }
  });

  test('$groupidentify events and /groupidentify update group profiles', async () => {
    const event = { event_type: '$groupidentify', device_id: 'device-groups', groups: { company: 'acme' }, group_properties: { $set: { size: 10 }, $add: { seats: 5 } } };
    expect((await upload([event])).status).toBe(200);
    const identification = JSON.stringify([
      { group_type: 'company', group_value: 'acme', group_properties: { $add: { seats: 2 }, $append: { regions: 'eu' } } },
      { group_type: 'company', group_value: 'globex', group_properties: { $setOnce: { founded: 1999 } } },
    ]);
    const answer = await postForm(`${ingest}/groupidentify`, { api_key: h.project.api_key, identification });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ code: 200, identifications_ingested: 2 });
    expect(await h.server.store.groupProfile(h.project.app_id, { group_type: 'company', group_value: 'acme' })).toEqual({ size: 10, seats: 7, regions: ['eu'] });
    expect(await h.server.store.groupProfile(h.project.app_id, { group_type: 'company', group_value: 'globex' })).toEqual({ founded: 1999 });
  });

  test('/groupidentify takes the key as a query parameter and refuses bad JSON and unknown keys', async () => {
    const one = JSON.stringify({ group_type: 'company', group_value: 'initech', group_properties: { $set: { a: 1 } } });
    const viaQuery = await postForm(`${ingest}/groupidentify?api_key=${h.project.api_key}`, { identification: one });
    expect(viaQuery.status).toBe(200);
    const broken = await postForm(`${ingest}/groupidentify`, { api_key: h.project.api_key, identification: '{"group_type":' });
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe(400);
    const unknown = await postForm(`${ingest}/groupidentify`, { api_key: 'unknown-key-123', identification: one });
    expect(unknown.body).toEqual({ code: 400, error: 'Invalid API key' });
  });
});

describe('attribution', () => {
  const attribute = (event: Record<string, unknown>) => postForm(`${ingest}/attribution`, { api_key: h.project.api_key, event: JSON.stringify(event) });

  test('an attribution that matches no user is held, then attached when an event with its id arrives', async () => {
    const answer = await attribute({ event_type: '[Adjust] Install', platform: 'ios', idfa: 'IDFA-HELD-0001', user_properties: { '[Adjust] network': 'search' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ code: 200, events_ingested: 1 });
    expect(h.server.attribution.heldCount()).toBe(1);
    expect((await stored()).some((e) => e.event_type === '[Adjust] Install')).toBe(false);
    expect((await upload([{ event_type: 'App Opened', user_id: 'user-attributed', idfa: 'IDFA-HELD-0001' }])).status).toBe(200);
    const attached = (await stored()).find((e) => e.event_type === '[Adjust] Install')!;
    expect(attached).toMatchObject({ user_id: 'user-attributed', idfa: 'IDFA-HELD-0001', platform: 'ios' });
    expect(h.server.attribution.heldCount()).toBe(0);
  });

  test('an attribution for a known advertising id is attached at once (query parameters work too)', async () => {
    expect((await upload([{ event_type: 'App Opened', device_id: 'device-android-1', adid: 'ADID-KNOWN-0001' }])).status).toBe(200);
    const event = encodeURIComponent(JSON.stringify({ event_type: '[Branch] Install', platform: 'android', adid: 'ADID-KNOWN-0001' }));
    const answer = await send(`${ingest}/attribution?api_key=${h.project.api_key}&event=${event}`, { method: 'POST' });
    expect(answer.status).toBe(200);
    expect((await stored()).find((e) => e.event_type === '[Branch] Install')).toMatchObject({ device_id: 'device-android-1' });
  });

  test('an android_app_set_id matches like the other ids, held or known', async () => {
    expect((await attribute({ event_type: '[Adjust] Install', platform: 'android', android_app_set_id: 'SET-ID-HELD-0001' })).status).toBe(200);
    expect((await upload([{ event_type: 'App Opened', user_id: 'user-app-set', android_app_set_id: 'SET-ID-HELD-0001' }])).status).toBe(200);
    const events = await stored();
    expect(events.find((e) => e.event_type === 'App Opened' && e.user_id === 'user-app-set')).toMatchObject({ android_app_set_id: 'SET-ID-HELD-0001' });
    expect(events.find((e) => e.android_app_set_id === 'SET-ID-HELD-0001' && e.event_type === '[Adjust] Install')).toMatchObject({ user_id: 'user-app-set' });
    expect((await attribute({ event_type: '[Adjust] Reattribution', platform: 'android', android_app_set_id: 'SET-ID-HELD-0001' })).status).toBe(200);
    expect((await stored()).find((e) => e.event_type === '[Adjust] Reattribution')).toMatchObject({ user_id: 'user-app-set' });
    expect(h.server.attribution.heldCount()).toBe(0);
  });

  test('held attributions are dropped after 72 hours; malformed ones get 400', async () => {
    expect((await attribute({ event_type: '[Adjust] Install', platform: 'ios', idfv: 'IDFV-NEVER-0001' })).status).toBe(200);
    expect(h.server.attribution.heldCount()).toBe(1);
    h.server.attribution.prune(Date.now() + 73 * 3_600_000);
    expect(h.server.attribution.heldCount()).toBe(0);
    expect((await attribute({ event_type: '[Adjust] Install', platform: 'android', idfa: 'IDFA-WRONG-PLATFORM' })).status).toBe(400);
    expect((await attribute({ event_type: 'Install', platform: 'ios', idfa: 'IDFA-NO-PREFIX' })).status).toBe(400);
    const broken = await postForm(`${ingest}/attribution`, { api_key: h.project.api_key, event: '{"event_type":' });
    expect(broken.body.code).toBe(400);
  });
});
