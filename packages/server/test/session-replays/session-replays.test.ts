// Session replays through the Prism proxy: recordings sent as the official session-replay
// SDK sends them (its own track destination: gzip and Bearer; page-exit beacons with
// api_key), the listing (bounds, both orders, paging, tokens), the file listing and the
// signed file links (expiry on a moved clock, tampering), tenant isolation, and the typed
// client's downloadReplay against the server in both file formats.
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import { createAppClient, downloadReplay } from '@svc/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';

interface TrackDestination {
  sendEventsList(context: Record<string, unknown>): void;
}
const require = createRequire(import.meta.url);
const { SessionReplayTrackDestination } = require('@amplitude/session-replay-browser/lib/cjs/track-destination.js') as {
  SessionReplayTrackDestination: new (options: Record<string, unknown>) => TrackDestination;
};

let h: Harness;
let now = Date.UTC(2026, 10, 25, 12);
const T0 = Date.UTC(2026, 10, 20, 9);
const basic = (p: { api_key: string; secret_key: string }) => ({ authorization: `Basic ${Buffer.from(`${p.api_key}:${p.secret_key}`).toString('base64')}` });
const app = (path: string, project = h.project) => send(`${h.proxied.app}${path}`, { headers: basic(project) });
const replayFiles = (replayId: string, query = '', project = h.project) => app(`/api/1/session-replays/files?replay_id=${encodeURIComponent(replayId)}${query}`, project);

/** Recorded-session events as the SDK serializes them (type and timestamp first). */
const recorded = (startMs: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ type: i === 0 ? 4 : 3, timestamp: startMs + i * 1000, data: i === 0 ? { href: 'https://shop.example.com/', width: 1280, height: 800 } : { source: 2, type: 2, id: i, x: i * 10, y: 5 } }));
const texts = (events: object[]) => events.map((event) => JSON.stringify(event));

/** Sends a batch with the SDK's own track destination (gzip body, Authorization: Bearer), straight to the server: Prism cannot forward gzip bodies. */
function sendWithSdk(deviceId: string, sessionId: number, events: object[], apiKey = h.project.api_key): Promise<string[]> {
  const logged: string[] = [];
  const logger = { log: (m: string) => logged.push(m), warn: (m: string) => logged.push(m), error: (m: string) => logged.push(m), debug: () => {}, enable: () => {}, disable: () => {} };
  const destination = new SessionReplayTrackDestination({ trackServerUrl: `${h.direct}/sessions/v2/track`, loggerProvider: logger });
  return new Promise((resolve) =>
    destination.sendEventsList({ events: texts(events), sessionId, deviceId, apiKey, sampleRate: 1, serverZone: 'US', flushMaxRetries: 1, type: 'replay', onComplete: async () => resolve(logged) }),
  );
}

/** A batch as the SDK's page-exit beacon sends it: api_key in the query, version 2, no compression; through the proxy. */
const sendBeaconBatch = (deviceId: string, sessionId: number, events: object[], query: Record<string, string> = { api_key: h.project.api_key }) =>
  postJson(`${h.proxied.ingest}/sessions/v2/track?${new URLSearchParams({ device_id: deviceId, session_id: String(sessionId), type: 'replay', ...query })}`, { version: 2, events: texts(events) });

const replayA = { deviceId: 'C8F9E604-F01A-4BD9-95C6-8E5357DF265D', sessionId: T0 };
const eventsA1 = recorded(T0, 3);
const eventsA2 = recorded(T0 + 60_000, 2);
/** Replays of the listing tests: starts one hour apart from T0 + 1 h. */
const listed = Array.from({ length: 5 }, (_, i) => ({ deviceId: `device-${i}`, sessionId: T0 + (i + 1) * 3_600_000 }));

beforeAll(async () => {
  h = await startHarness(['ingest', 'app'], { clock: () => now });
  const logged = await sendWithSdk(replayA.deviceId, replayA.sessionId, eventsA1);
  expect(logged.join('\n')).toMatch(/tracked successfully/);
  expect((await sendBeaconBatch(replayA.deviceId, replayA.sessionId, eventsA2)).status).toBe(200);
  for (const { deviceId, sessionId } of listed) expect((await sendBeaconBatch(deviceId, sessionId, recorded(sessionId, 1))).status).toBe(200);
  // The device of replay A is known to ingestion; the others are not.
  const sent = await postJson(`${h.proxied.ingest}/batch`, { api_key: h.project.api_key, events: [{ event_type: 'Checkout', device_id: replayA.deviceId, time: T0 }] });
  expect(sent.status).toBe(200);
  await h.server.store.flush();
}, 120_000);
afterAll(() => h?.close());

test('a batch is acknowledged with the events stored, and the replay spans its events', async () => {
  const sessionId = T0 + 10 * 86_400_000 - 1;
  const answer = await sendBeaconBatch('ack-device', sessionId, recorded(sessionId, 2));
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ code: 200, events_ingested: 2, server_upload_time: now });
  const { body } = await app(`/api/1/session-replays?start_time=${new Date(sessionId).toISOString()}`);
  expect(body.session_replays).toEqual([
    { replay_id: `ack-device/${sessionId}`, session_id: String(sessionId), device_id: 'ack-device', svc_id: null, start_time: new Date(sessionId).toISOString(), end_time: new Date(sessionId + 1000).toISOString(), retention_in_days: 90 },
  ]);
});

test('the replay of the SDK batches lists the svc_id of its device, from its first to its last event', async () => {
  const { body } = await app(`/api/1/session-replays?end_time=${new Date(T0).toISOString()}`);
  const svcId = (await h.server.store.entities.svcIdsOfDevices(h.project.app_id, [replayA.deviceId])).get(replayA.deviceId);
  expect(svcId).toBeTypeOf('number');
  expect(body).toEqual({
    session_replays: [
      {
        replay_id: `${replayA.deviceId}/${replayA.sessionId}`,
        session_id: String(replayA.sessionId),
        device_id: replayA.deviceId,
        svc_id: svcId,
        start_time: new Date(T0).toISOString(),
        end_time: new Date(eventsA2.at(-1)!.timestamp).toISOString(),
        retention_in_days: 90,
      },
    ],
    next_page_token: null,
  });
});

test('interaction batches are skipped with the capture-disabled directive and not listed', async () => {
  const url = `${h.proxied.ingest}/sessions/v2/track?device_id=clicks&session_id=${T0}&type=interaction`;
  const answer = await postJson(url, { version: 1, events: ['{"type":"click","x":1,"y":2,"timestamp":1}'] }, { authorization: `Bearer ${h.project.api_key}` });
  expect(answer.status).toBe(200);
  expect(answer.body.events_ingested).toBe(0);
  expect(answer.headers.get('x-session-replay-event-skipped')).toBe('4005');
  expect((await replayFiles(`clicks/${T0}`)).status).toBe(404);
});

test('a batch with an event that is not a recorded-session event is refused whole', async () => {
  const url = `${h.proxied.ingest}/sessions/v2/track?device_id=broken&session_id=${T0}`;
  const answer = await postJson(url, { version: 1, events: [JSON.stringify(recorded(T0, 1)[0]), '{"type":3,"timestamp":"soon","data":{}}'] }, { authorization: `Bearer ${h.project.api_key}` });
  expect(answer.status).toBe(400);
  expect(answer.body.error).toMatch(/events\[1\]/);
  const notJson = await postJson(url, { version: 1, events: ['{"type":3,'] }, { authorization: `Bearer ${h.project.api_key}` });
  expect(notJson.status).toBe(400);
  expect((await replayFiles(`broken/${T0}`)).status).toBe(404);
});

test('recording needs a known API key, by Bearer or api_key, naming one project', async () => {
  const url = (query = '') => `${h.proxied.ingest}/sessions/v2/track?device_id=keys&session_id=${T0}${query}`;
  const batch = { version: 1, events: texts(recorded(T0, 1)) };
  // Prism answers a request without credentials itself: the server's own answer is read directly.
  expect(await postJson(`${h.direct}/sessions/v2/track?device_id=keys&session_id=${T0}`, batch)).toMatchObject({ status: 401, body: { code: 401 } });
  expect((await postJson(url(), batch, { authorization: 'Bearer not-a-key' })).status).toBe(401);
  expect((await postJson(url('&api_key=not-a-key'), batch)).status).toBe(401);
  expect((await postJson(url(`&api_key=${h.otherProject.api_key}`), batch, { authorization: `Bearer ${h.project.api_key}` })).status).toBe(401);
  expect((await replayFiles(`keys/${T0}`)).status).toBe(404);
});

test('the listing pages through the replays in both orders, with start_time and end_time bounding the start inclusively', async () => {
  const range = `start_time=${new Date(listed[0]!.sessionId).toISOString()}&end_time=${new Date(listed[4]!.sessionId).toISOString()}`;
  const ids = listed.map((r) => `${r.deviceId}/${r.sessionId}`);
  for (const order of ['asc', 'desc'] as const) {
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const answer = await app(`/api/1/session-replays?${range}&page_size=2&sort_order=${order}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
      expect(answer.status).toBe(200);
      seen.push(...answer.body.session_replays.map((r: { replay_id: string }) => r.replay_id));
      token = answer.body.next_page_token;
      pages++;
    } while (token);
    expect(seen).toEqual(order === 'asc' ? ids : [...ids].reverse());
    expect(pages).toBe(3);
  }
  const inner = await app(`/api/1/session-replays?start_time=${new Date(listed[1]!.sessionId).toISOString()}&end_time=${new Date(listed[3]!.sessionId).toISOString()}`);
  expect(inner.body.session_replays.map((r: { replay_id: string }) => r.replay_id)).toEqual(ids.slice(1, 4));
  const all = await app('/api/1/session-replays');
  expect(all.body.session_replays).toHaveLength(7);
});

test('a page token is tied to its sort order; malformed tokens and parameters get 400', async () => {
  const first = await app('/api/1/session-replays?page_size=1&sort_order=asc');
  const token = encodeURIComponent(first.body.next_page_token);
  const mismatch = await app(`/api/1/session-replays?page_size=1&sort_order=desc&page_token=${token}`);
  expect(mismatch.status).toBe(400);
  expect(mismatch.body).toEqual({ code: 400, error: 'page_token was issued for sort_order asc; use the same sort_order on every page' });
  expect((await app(`/api/1/session-replays?page_size=1&page_token=${token}`)).status).toBe(200);
  expect((await app('/api/1/session-replays?page_token=bm90LWEtdG9rZW4')).status).toBe(400);
  expect((await app('/api/1/session-replays?page_size=201')).status).toBe(400);
  expect((await app('/api/1/session-replays?page_size=0')).status).toBe(400);
  expect((await app('/api/1/session-replays?sort_order=newest')).status).toBe(400);
  expect((await app('/api/1/session-replays?start_time=yesterday')).status).toBe(400);
  const reversed = await app(`/api/1/session-replays?start_time=${new Date(T0).toISOString()}&end_time=${new Date(T0 - 1).toISOString()}`);
  expect(reversed.status).toBe(400);
  expect(reversed.body.error).toMatch(/before start_time/);
});

test('the file listing pages through signed links; 404 only on the first page; files gone with the retention', async () => {
  const replayId = `${replayA.deviceId}/${replayA.sessionId}`;
  const first = await replayFiles(replayId, '&page_size=1');
  expect(first.status).toBe(200);
  expect(first.body.files).toHaveLength(1);
  const second = await replayFiles(replayId, `&page_size=1&page_token=${encodeURIComponent(first.body.next_page_token)}`);
  expect(second.body.files).toHaveLength(1);
  expect(second.body.next_page_token).toBeNull();
  const [v3, v3b] = [first.body.files[0], second.body.files[0]].map((link: string) => new URL(link));
  expect(v3!.pathname).toMatch(/^\/api\/1\/session-replays\/downloads\/\d+$/);
  const file = await fetch(v3!.href);
  expect(file.headers.get('content-type')).toBe('application/gzip');
  expect(JSON.parse(gunzipSync(Buffer.from(await file.arrayBuffer())).toString('utf8'))).toEqual(eventsA1);
  expect(v3b!.pathname).not.toBe(v3!.pathname);

  expect((await replayFiles('unknown-device/1')).status).toBe(404);
  expect((await replayFiles(replayId, '&page_token=bm90LWEtdG9rZW4')).status).toBe(400);
  expect((await app('/api/1/session-replays/files?replay_id=no-session')).status).toBe(400);
  // 100 days on, every replay of the test is past its 90 days.
  now += 100 * 86_400_000;
  try {
    const later = await replayFiles(replayId, `&page_size=1&page_token=${encodeURIComponent(first.body.next_page_token)}`);
    expect(later.body).toEqual({ files: [], next_page_token: null });
    expect((await replayFiles(replayId)).status).toBe(404);
    expect((await app('/api/1/session-replays')).body.session_replays).toEqual([]);
  } finally {
    now -= 100 * 86_400_000;
  }
});

test('file links need no credentials, expire after 15 minutes and refuse tampering with 403', async () => {
  const { body } = await replayFiles(`${replayA.deviceId}/${replayA.sessionId}`);
  const link = new URL(body.files[0]);
  expect((await send(link.href)).status).toBe(200);
  const tampered = new URL(link);
  tampered.searchParams.set('signature', 'f'.repeat(64));
  const refused = await send(tampered.href);
  expect(refused.status).toBe(403);
  expect(refused.body.error).toMatch(/expired or is not valid/);
  const otherVersion = new URL(link);
  otherVersion.searchParams.set('version', '2');
  expect((await send(otherVersion.href)).status).toBe(403);
  const otherFile = new URL(link);
  otherFile.pathname = `/api/1/session-replays/downloads/${Number(link.pathname.split('/').at(-1)) + 1}`;
  expect((await send(otherFile.href)).status).toBe(403);
  const malformed = new URL(link);
  malformed.searchParams.set('signature', 'not-hex');
  expect((await send(malformed.href)).status).toBe(403);
  now += 15 * 60_000 + 1000;
  try {
    const expired = await send(link.href);
    expect(expired.status).toBe(403);
    expect(expired.body.error).toMatch(/list the files again/);
  } finally {
    now -= 15 * 60_000 + 1000;
  }
});

test('another project sees none of the replays and cannot list their files', async () => {
  const listing = await app('/api/1/session-replays', h.otherProject);
  expect(listing.body).toEqual({ session_replays: [], next_page_token: null });
  expect((await replayFiles(`${replayA.deviceId}/${replayA.sessionId}`, '', h.otherProject)).status).toBe(404);
  expect(await send(`${h.server.urls.app}/api/1/session-replays`)).toMatchObject({ status: 401, body: { code: 401 } });
  expect((await send(`${h.proxied.app}/api/1/session-replays`, { headers: basic({ api_key: h.project.api_key, secret_key: 'wrong' }) })).status).toBe(401);
});

test("the typed client's downloadReplay gets back exactly the recorded events, in file formats 3 and 2", async () => {
  const client = createAppClient({ apiKey: h.project.api_key, secretKey: h.project.secret_key, baseUrl: h.proxied.app });
  const replayId = `${replayA.deviceId}/${replayA.sessionId}`;
  for (const version of [3, 2] as const) {
    expect(await downloadReplay(client, replayId, { version, pageSize: 1 })).toEqual([...eventsA1, ...eventsA2]);
  }
});
