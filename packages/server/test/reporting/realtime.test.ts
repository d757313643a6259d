// `/api/2/realtime` against expectations computed here from the oracle's resolved users
// (oracle.ts): users with an active event per five minutes of today and yesterday, local days
// of the project's zone (one a whole hour off UTC, one half an hour off), today's cut at now;
// merged, joined and mapped users count once; inactive events, events before yesterday and
// after now do not count. A day when clocks go forward keeps its 288 intervals. Then what is
// refused (400), the credentials (401), the projects kept apart and the cost. Every answer
// goes through the Prism proxy (checked against the spec).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';
import { createRandom, type UploadEvent } from './dataset.js';
import { bucketOf, createOracle, localParts, xValuesOf } from './oracle.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// Friday 2026-03-20, 12:07 UTC: "now" for most tests.
const NOW = Date.UTC(2026, 2, 20, 12, 7, 30);
// Monday 2026-03-09, 10:02 in Los Angeles: yesterday is the day clocks went forward there.
const AFTER_DST = Date.UTC(2026, 2, 9, 17, 2);
const MAPPINGS = [{ userId: 'user-3', globalUserId: 'user-4' }];

/** Events of 40 users from three days before `around` to an hour after it, every few minutes. */
function generate(seed: number, around: number): UploadEvent[] {
  const random = createRandom(seed);
  const events: UploadEvent[] = [];
  for (let k = 0; k < 40; k++) {
    for (let at = around - 3 * DAY + Math.floor(random() * 6 * HOUR); at < around + HOUR; at += Math.floor(random() * 5 * HOUR)) {
      // Anonymous at first (joined when the user signs in), some later on a new device (merged).
      const anonymous = k % 5 === 0 && at < around - 2 * DAY;
      const device = k % 7 === 0 && at > around - DAY ? `moved-${k}` : `device-${k}`;
      const id = anonymous ? { device_id: device } : { user_id: `user-${k}`, device_id: device };
      events.push({ event_type: random() < 0.15 ? '[Experiment] Exposure' : 'Open', time: at, ...id });
      if (random() < 0.5) events.push({ event_type: 'Play', time: at + Math.floor(random() * 9 * MINUTE), ...id });
    }
  }
  return events.sort((a, b) => a.time - b.time);
}

/** The answer computed from the oracle's resolved users: distinct active users per local five minutes. */
function expected(uploads: UploadEvent[], timeZone: string, now: number) {
  const today = localParts(now, timeZone).date;
  const yesterday = localParts(Date.parse(`${today}T12:00:00Z`) - DAY, 'UTC').date;
  const labels = xValuesOf({ start: yesterday.replace(/-/g, ''), end: today.replace(/-/g, ''), timeZone }, 'realtime');
  const users = new Map<string, Set<number>>();
  for (const r of createOracle(uploads, timeZone, MAPPINGS).events) {
    if (!r.active) continue;
    const label = bucketOf(r.event.time, timeZone, 'realtime');
    users.set(label, (users.get(label) ?? new Set()).add(r.svcId));
  }
  const count = (label: string) => users.get(label)?.size ?? 0;
  const ofDay = (day: string) => labels.filter((label) => label.startsWith(day));
  const nowLabel = bucketOf(now, timeZone, 'realtime');
  return {
    xValues: ofDay(today).map((label) => label.slice(11, 16)),
    seriesLabels: ['Today', 'Yesterday'],
    series: [ofDay(today).filter((label) => label <= nowLabel).map(count), ofDay(yesterday).map(count)],
  };
}

let h: Harness;
let auth: Record<string, string>;
let otherAuth: Record<string, string>;
let now = NOW;
// A small five-minute budget, so that the last test can spend it; no earlier "now" spends it.
const LIMITS = { concurrentRequests: 5, costPerFiveMinutes: 20, costPerHour: 1_000_000 };
const uploads = [...generate(11, NOW), ...generate(12, AFTER_DST)];
const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

beforeAll(async () => {
  h = await startHarness(['ingest', 'app', 'api'], { clock: () => now, reportingLimits: LIMITS });
  auth = basic(h.project.api_key, h.project.secret_key);
  otherAuth = basic(h.otherProject.api_key, h.otherProject.secret_key);
  for (let i = 0; i < uploads.length; i += 500) expect((await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events: uploads.slice(i, i + 500) })).status).toBe(200);
  // The other project: one user, five minutes ago, who must not show in this project's answers.
  expect((await postJson(`${h.direct}/batch`, { api_key: h.otherProject.api_key, events: [{ event_type: 'Open', user_id: 'user-1', time: NOW - 5 * MINUTE }] })).status).toBe(200);
  for (const { userId, globalUserId } of MAPPINGS) {
    expect((await postJson(`${h.proxied.api}/usermap`, { api_key: h.project.api_key, mapping: { user_id: userId, global_user_id: globalUserId } })).status).toBe(200);
  }
  await h.server.store.flush();
}, 120_000);
afterAll(() => h?.close());

const get = (query = '', headers = auth) => send(`${h.proxied.app}/api/2/realtime${query}`, { headers });

describe.each(['America/Los_Angeles', 'Asia/Kolkata', 'UTC'])('in %s', (timeZone) => {
  beforeAll(() => h.server.tenancy.setTimeZone(h.project.app_id, timeZone));

  test('today up to now and all of yesterday, per five minutes', async () => {
    now = NOW;
    const answer = await get('?i=5');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.data).toEqual(expected(uploads, timeZone, NOW));
  });
});

test('the answers are not trivial: today is cut at now, yesterday has 288 intervals, users count once per interval', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  now = NOW;
  const { data } = (await get()).body;
  expect(data.xValues).toHaveLength(288);
  expect(data.xValues.slice(0, 3)).toEqual(['00:00', '00:05', '00:10']);
  // 12:07:30 UTC is in the interval 12:05, the 146th.
  expect(data.series[0]).toHaveLength(146);
  expect(data.series[1]).toHaveLength(288);
  const busy = data.series[1].filter((users: number) => users > 0).length;
  expect(busy).toBeGreaterThan(50);
  expect(Math.max(...data.series[0], ...data.series[1])).toBeLessThanOrEqual(40);
});

test('by hand: a user of several events in an interval counts once, inactive events not at all, the interval of now counts', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'Asia/Tokyo');
  // 2026-04-02 09:31 in Tokyo.
  now = Date.UTC(2026, 3, 2, 0, 31);
  const events = [
    { event_type: 'Open', user_id: 'hand-1', time: Date.UTC(2026, 3, 2, 0, 30) },
    { event_type: 'Play', user_id: 'hand-1', time: Date.UTC(2026, 3, 2, 0, 31) },
    { event_type: '[Experiment] Exposure', user_id: 'hand-2', time: Date.UTC(2026, 3, 2, 0, 30) },
    // Yesterday 23:55 in Tokyo, and the day before yesterday 23:59 (not counted).
    { event_type: 'Open', user_id: 'hand-2', time: Date.UTC(2026, 3, 1, 14, 55) },
    { event_type: 'Open', user_id: 'hand-3', time: Date.UTC(2026, 2, 31, 14, 59) },
  ];
  expect((await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
  await h.server.store.flush();
  const { data } = (await get()).body;
  // 09:30 is the 115th interval of the day.
  expect(data.series[0]).toEqual([...new Array(114).fill(0), 1]);
  expect(data.series[1]).toEqual([...new Array(287).fill(0), 1]);
});

test('the day clocks went forward keeps its 288 intervals, the skipped hour counting 0', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'America/Los_Angeles');
  now = AFTER_DST;
  const answer = await get();
  expect(answer.status).toBe(200);
  expect(answer.body.data).toEqual(expected(uploads, 'America/Los_Angeles', AFTER_DST));
  const yesterday: number[] = answer.body.data.series[1];
  expect(yesterday).toHaveLength(288);
  expect(yesterday.slice(24, 36)).toEqual(new Array(12).fill(0));
  expect(yesterday.filter((users) => users > 0).length).toBeGreaterThan(50);
});

test('an interval other than 5 is 400, saying so', async () => {
  // As the spec's example.
  expect((await get('?i=1')).body).toEqual({ code: 400, error: 'Invalid request: query parameter i: / must be equal to one of the allowed values {"allowedValues":[5]}' });
  for (const query of ['?i=1', '?i=60', '?i=five', '?i=5.0e99']) {
    const answer = await get(query);
    expect(answer.status, query).toBe(400);
    expect(answer.body).toMatchObject({ code: 400, error: expect.stringMatching(/query parameter i/) });
  }
});

test('without credentials or with a wrong secret key: 401', async () => {
  // Without credentials Prism answers itself: to the server directly.
  expect((await send(`${h.server.urls.app}/api/2/realtime`)).status).toBe(401);
  expect((await get('', basic(h.project.api_key, 'not-the-secret'))).status).toBe(401);
});

test('a project sees its own users only', async () => {
  h.server.tenancy.setTimeZone(h.otherProject.app_id, 'UTC');
  now = NOW;
  const answer = await get('', otherAuth);
  expect(answer.status).toBe(200);
  // Its one user, in the interval 12:00.
  expect(answer.body.data.series[0]).toEqual([...new Array(144).fill(0), 1, 0]);
  expect(answer.body.data.series[1]).toEqual(new Array(288).fill(0));
});

test('a request costs 2 (two days, one condition, 1): ten fit a budget of 20 per five minutes, the eleventh is 429 naming the cost', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  now = NOW + 30 * DAY;
  for (let i = 0; i < 10; i++) expect((await get()).status).toBe(200);
  const refused = await get();
  expect(refused.status).toBe(429);
  expect(refused.body).toMatchObject({ code: 429, exceeded_limit: 'concurrent_cost' });
  expect(refused.body.error).toMatch(/costs 2;/);
});
