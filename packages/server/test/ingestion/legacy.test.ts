// The legacy SDKs' form upload (`POST /`) and the Identify API (`POST /identify`), as those
// clients send them, every answer held to the spec: `success` once stored, the upload's
// rules (dedupe by the SDK's uuid, ids, limits), and nothing stored on a bad checksum, form
// or identification.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postForm, postJson, send } from '../support/http.js';
import { basic, exportedLines } from '../export/project-export.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness(['ingest', 'app']);
});
afterAll(() => h?.close());

const stored = async (eventType: string, appId = h.project.app_id) => (await h.server.store.events(appId)).filter((e) => e.event_type === eventType);

/** The fields amplitude-js 8.x posts, the checksum computed as it does. */
function legacyForm(events: unknown[], client = h.project.api_key, uploadTime = String(Date.now())): Record<string, string> {
  const e = JSON.stringify(events);
  return { client, e, v: '2', upload_time: uploadTime, checksum: createHash('md5').update(`2${client}${e}${uploadTime}`).digest('hex') };
}

const sdkEvent = (n: number, extra: Record<string, unknown> = {}) => ({
  event_type: 'Legacy Play',
  device_id: 'legacy-device-1',
  user_id: null,
  timestamp: Date.UTC(2026, 10, 20, 12, n),
  uuid: `legacy-uuid-${n}`,
  session_id: Date.UTC(2026, 10, 20, 12),
  event_id: n,
  sequence_number: n,
  version_name: '8.0.1',
  platform: 'Web',
  os_name: 'Chrome',
  os_version: '124',
  device_model: 'Mac OS',
  language: 'en-US',
  event_properties: { track: `t${n}` },
  user_properties: {},
  groups: {},
  group_properties: {},
  api_properties: {},
  library: { name: 'amplitude-js', version: '8.21.9' },
  user_agent: 'Mozilla/5.0',
  ...extra,
});

describe('legacy SDK upload (POST /)', () => {
  test('answers the text success, stores the events in the batch upload form, and a retried upload once', async () => {
    const form = legacyForm([sdkEvent(1), sdkEvent(2, { user_id: 'legacy-user-1' })]);
    const answer = await postForm(`${h.direct}/`, form);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('success');
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
    // The SDK retries with the same uuids when it lost the answer.
    expect((await postForm(`${h.direct}/`, legacyForm([sdkEvent(1), sdkEvent(2, { user_id: 'legacy-user-1' })]))).body).toBe('success');
    await h.server.store.flush();
    const events = await stored('Legacy Play');
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ insert_id: 'legacy-uuid-1', time: Date.UTC(2026, 10, 20, 12, 1), device_id: 'legacy-device-1', user_id: null, app_version: '8.0.1', platform: 'Web', os_name: 'Chrome', event_properties: { track: 't1' }, ip: '127.0.0.1' });
    expect(events[1]).toMatchObject({ user_id: 'legacy-user-1', insert_id: 'legacy-uuid-2' });
  });

  test('$identify events of the SDK change the profile, $clearAll included', async () => {
    const identify = (n: number, user_properties: Record<string, unknown>) => sdkEvent(10 + n, { event_type: '$identify', user_id: 'legacy-profile', user_properties });
    const form = legacyForm([identify(1, { $set: { plan: 'pro', seats: 3 } }), identify(2, { $clearAll: '-' }), identify(3, { $set: { plan: 'team' }, $add: { logins: 2 } })]);
    expect((await postForm(`${h.direct}/`, form)).body).toBe('success');
    await h.server.store.flush();
    expect(await h.server.store.userProfile(h.project.app_id, 'legacy-profile')).toEqual({ plan: 'team', logins: 2 });
  });

  test('a checksum that does not match, a missing field or an unknown key: 400 and nothing stored', async () => {
    const form = legacyForm([sdkEvent(30, { event_type: 'Legacy Refused' })]);
    const wrong = await postForm(`${h.direct}/`, { ...form, upload_time: String(Number(form.upload_time) + 1) });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ code: 400, error: 'checksum does not match the MD5 of v, client, e and upload_time' });
    const { checksum: _dropped, ...withoutChecksum } = form;
    expect((await postForm(`${h.direct}/`, withoutChecksum)).status).toBe(400);
    expect((await postForm(`${h.direct}/`, legacyForm([sdkEvent(31, { event_type: 'Legacy Refused' })], 'not-a-key'))).status).toBe(400);
    expect((await postForm(`${h.direct}/`, { ...legacyForm([]), e: '[{"event_type":' })).status).toBe(400);
    const withoutIds = await postForm(`${h.direct}/`, legacyForm([sdkEvent(32, { event_type: 'Legacy Refused', device_id: null })]));
    expect(withoutIds.body).toEqual({ code: 400, error: 'event 0 has neither a user_id nor a device_id' });
    await h.server.store.flush();
    expect(await stored('Legacy Refused')).toEqual([]);
  });

  test('more than 2000 events: 413, as the SDK expects before it halves its batch', async () => {
    const many = Array.from({ length: 2001 }, (_, n) => sdkEvent(n, { event_type: 'Legacy Many' }));
    expect((await postForm(`${h.direct}/`, legacyForm(many))).status).toBe(413);
  });
});

describe('Identify API (POST /identify)', () => {
  const identify = (identification: unknown, fields: Record<string, string> = { api_key: h.project.api_key }) => postForm(`${h.direct}/identify`, { ...fields, identification: JSON.stringify(identification) });

  test('applies the operations to the user and maps a device to its user, as $identify events', async () => {
    const answer = await identify([
      { user_id: 'identified-1', user_properties: { $set: { plan: 'free', tier: 1 }, $setOnce: { first: 'a' } }, country: 'Germany', platform: 'iOS' },
      { user_id: 'identified-1', user_properties: { $set: { plan: 'pro' }, $setOnce: { first: 'b' }, $unset: { tier: '-' }, $append: { tags: 'x' } } },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('success');
    expect((await identify({ user_id: 'identified-2', device_id: 'identified-device-2' })).body).toBe('success');
    await h.server.store.flush();
    expect(await h.server.store.userProfile(h.project.app_id, 'identified-1')).toEqual({ plan: 'pro', first: 'a', tags: ['x'] });
    const records = await stored('$identify');
    expect(records.filter((r) => r.user_id === 'identified-1')[0]).toMatchObject({ country: 'Germany', platform: 'iOS', insert_id: null });
    const mapped = await h.server.store.entities.svcIdsOfDevices(h.project.app_id, ['identified-device-2']);
    const users = await h.server.store.entities.userIdsOfSvcIds(h.project.app_id, [...mapped.values()]);
    expect([...users.values()]).toEqual(['identified-2']);
  });

  test("paying and start_version set through it are the user's from then on, in reporting and in the export", async () => {
    const user = { user_id: 'identified-paying', device_id: 'identified-paying-device' };
    const at = Date.UTC(2026, 10, 20, 9);
    const upload = async (eventType: string, minute: number, appVersion: string) =>
      expect((await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events: [{ event_type: eventType, ...user, time: at + minute * 60_000, app_version: appVersion }] })).status).toBe(200);
    await upload('Before', 0, '1.0');
    expect((await identify({ ...user, paying: 'true', start_version: '0.9', user_properties: { $set: { plan: 'pro' } } })).body).toBe('success');
    await upload('Between', 1, '2.0');
    expect((await identify({ ...user, paying: 'false', user_properties: { seats: 2 } })).body).toBe('success');
    await upload('After', 2, '2.0');
    await h.server.store.flush();
    // The profile keeps them, beside the properties sent.
    expect(await h.server.store.userProfile(h.project.app_id, 'identified-paying')).toEqual({ plan: 'pro', paying: 'false', start_version: '0.9', seats: 2 });
    const lines = (await exportedLines(h, h.project)).map((line) => JSON.parse(line)).filter((event) => event.user_id === 'identified-paying');
    expect(lines.map((e) => [e.event_type, e.paying, e.start_version])).toEqual([
      ['Before', false, '1.0'],
      ['$identify', true, '0.9'],
      ['Between', true, '0.9'],
      ['$identify', false, '0.9'],
      ['After', false, '0.9'],
    ]);
    // Reporting's built-in user properties at each event.
    const groups = async (eventType: string, property: string) => {
      const e = JSON.stringify({ event_type: eventType, group_by: [{ type: 'user', value: property }] });
      const answer = await send(`${h.direct}/api/2/events/segmentation?e=${encodeURIComponent(e)}&start=20261120&end=20261120&m=totals`, { headers: basic(h.project) });
      expect(answer.status).toBe(200);
      return answer.body.data.seriesLabels.map((label: unknown[]) => label.at(-1));
    };
    expect([await groups('Before', 'paying'), await groups('Between', 'paying'), await groups('After', 'paying')]).toEqual([['false'], ['true'], ['false']]);
    expect([await groups('Before', 'start_version'), await groups('Between', 'start_version')]).toEqual([['1.0'], ['0.9']]);
  });

  test('paying and start_version are set after every operation sent beside them, $clearAll included', async () => {
    const user = { user_id: 'identified-cleared' };
    expect((await identify({ ...user, user_properties: { plan: 'pro', seats: 3 } })).body).toBe('success');
    expect((await identify({ ...user, paying: 'true', start_version: '3.1', user_properties: { $set: { plan: 'team', paying: 'false' }, $clearAll: '-' } })).body).toBe('success');
    await h.server.store.flush();
    expect(await h.server.store.userProfile(h.project.app_id, 'identified-cleared')).toEqual({ paying: 'true', start_version: '3.1' });
  });

  test('the key as a query parameter; without ids, with bad JSON or without a key: 400 and nothing stored', async () => {
    expect((await send(`${h.direct}/identify?api_key=${h.project.api_key}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ identification: JSON.stringify({ user_id: 'identified-3', user_properties: { a: 1 } }) }).toString() })).body).toBe('success');
    expect((await identify({ user_properties: { $set: { refused: true } } })).body).toEqual({ code: 400, error: 'identification 0 has neither a user_id nor a device_id' });
    expect((await postForm(`${h.direct}/identify`, { api_key: h.project.api_key, identification: '{"user_id":' })).status).toBe(400);
    expect((await identify({ user_id: 'identified-4', unknown_field: 1 })).status).toBe(400);
    expect((await identify({ user_id: 'identified-4' }, {})).status).toBe(400);
    await h.server.store.flush();
    expect(await h.server.store.userProfile(h.project.app_id, 'identified-3')).toEqual({ a: 1 });
    expect(await h.server.store.userProfile(h.project.app_id, 'identified-4')).toBeUndefined();
  });
});
