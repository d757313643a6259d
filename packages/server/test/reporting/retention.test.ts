// `/api/2/retention` against its independent oracle (retention-oracle.ts): generated events of
// users who join anonymous devices, merge and are mapped (/usermap), in a project time zone
// whose days are not UTC's; n-day, rolling and bracket modes, by day, week and month, with a
// segment and a group-by; "now" inside the data, so newer cohorts are cut and incomplete. Every
// answer goes through the Prism proxy (checked against the spec). Then what is refused (400),
// the credentials (401), the cost (8 per condition-day) and the projects kept apart.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Harness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';
import { agreesWithOracle, queryString as query, startCohortProject, visitingUsers } from './cohort-project.js';
import type { UploadEvent } from './dataset.js';
import { createOracle } from './oracle.js';
import { retention, type RetentionParams } from './retention-oracle.js';

const DAY = 86_400_000;
const FIRST_DAY = Date.UTC(2026, 2, 1);
// Friday 2026-03-20, noon UTC: the cohorts of the last days of March are cut.
const NOW = Date.UTC(2026, 2, 20, 12);
const MAPPINGS = [
  { userId: 'user-3', globalUserId: 'user-4' },
  { userId: 'user-10', globalUserId: 'user-11' },
];

/** Users over 24 days, new on one of the first 18, who play music (a genre) on most visits. */
function generate(seed: number, users: number): UploadEvent[] {
  return visitingUsers({ seed, users, firstDayMs: FIRST_DAY, newDays: 18, days: 24, skip: 0.45 }, (_, random, at, id, who) => [
    ...(random() < 0.6 ? [{ event_type: 'Play', time: at + 60_000, ...id, ...who, event_properties: { genre: random() < 0.5 ? 'jazz' : 'rock' } }] : []),
    ...(random() < 0.2 ? [{ event_type: '[Experiment] Exposure', time: at + 120_000, ...id }] : []),
  ]);
}

let h: Harness;
let auth: Record<string, string>;
let otherAuth: Record<string, string>;
const uploads = generate(7, 60);
// The other project: one user, who must not show in this project's answers.
const OTHER_EVENTS = [0, 1, 2].map((day) => ({ event_type: 'Open', user_id: 'user-1', time: FIRST_DAY + day * DAY + 3_600_000 }));

beforeAll(async () => {
  ({ h, auth, otherAuth } = await startCohortProject(uploads, OTHER_EVENTS, MAPPINGS, NOW));
}, 120_000);
afterAll(() => h?.close());

const get = (params: Record<string, unknown>, headers = auth) => send(`${h.proxied.app}/api/2/retention?${query(params)}`, { headers });

const MARCH = { start: '20260302', end: '20260316' };
const OPEN = { event_type: 'Open' };
const PLAY = { event_type: 'Play' };
const questions: [string, RetentionParams][] = [
  ['n-day, Open then Play', { ...MARCH, se: OPEN, re: PLAY }],
  ['n-day spelled n-day, any active event', { ...MARCH, se: OPEN, re: { event_type: '_active' }, rm: 'n-day' }],
  ['rolling, Open then a jazz Play', { ...MARCH, se: OPEN, re: { event_type: 'Play', filters: [{ subprop_type: 'event', subprop_key: 'genre', subprop_op: 'is', subprop_value: ['jazz'] }] }, rm: 'rolling' }],
  ['brackets of new users', { ...MARCH, se: { event_type: '_new' }, re: OPEN, rm: 'bracket', rb: [[0, 1], [1, 4], [4, 9]] }],
  ['weekly n-day of new users', { start: '20260301', end: '20260324', se: { event_type: '_new' }, re: { event_type: '_all' }, i: 7 }],
  ['weekly rolling by platform in a segment', { start: '20260301', end: '20260324', se: OPEN, re: PLAY, rm: 'rolling', i: 7, g: 'platform', s: [{ prop: 'country', op: 'is not', values: ['Japan'] }] }],
  ['monthly brackets', { start: '20260201', end: '20260331', se: OPEN, re: OPEN, rm: 'bracket', rb: [[0, 1], [1, 2]], i: 30 }],
  ['by country, limit 2', { ...MARCH, se: PLAY, re: OPEN, g: 'country', limit: 2 }],
];

agreesWithOracle({ project: () => ({ h, auth, otherAuth }), uploads, mappings: MAPPINGS }, questions, (params) => get({ ...params }), (oracle, params) => retention(oracle, params, NOW));

test('the answers are not trivial: merged and mapped users count once, newer cohorts are cut, some columns are incomplete', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  const data = (await get({ start: '20260301', end: '20260324', se: OPEN, re: OPEN })).body.data;
  const series = data.series[0];
  expect(series.dates[0]).toBe('Mar 24');
  // Cohorts after now have only their users; the cohort of now's day is incomplete.
  expect(series.values['Mar 24']).toHaveLength(1);
  expect(series.values['Mar 20'][1]).toMatchObject({ incomplete: true });
  expect(series.values['Mar 01']).toHaveLength(21);
  const users = new Set(createOracle(uploads, 'UTC', MAPPINGS).events.filter((r) => r.event.event_type === 'Open').map((r) => r.svcId));
  expect(series.combined[0].count).toBe(users.size);
  expect(users.size).toBeLessThan(60);
  expect(series.combined[2].count).toBeGreaterThan(0);
});

test('by hand: returns before the start do not count, Day 0 is the start\'s day, rolling stops at the last column, brackets reach past the range', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  const jan = (day: number, hour: number) => Date.UTC(2026, 0, day, hour);
  const events = [
    { event_type: 'Play', user_id: 'hand-1', time: jan(5, 9) },
    { event_type: 'Open', user_id: 'hand-1', time: jan(5, 10) },
    { event_type: 'Play', user_id: 'hand-1', time: jan(6, 12) },
    { event_type: 'Play', user_id: 'hand-1', time: jan(8, 12) },
    { event_type: 'Play', user_id: 'hand-2', time: jan(5, 8) },
    { event_type: 'Open', user_id: 'hand-2', time: jan(6, 10) },
    { event_type: 'Play', user_id: 'hand-2', time: jan(6, 11) },
    { event_type: 'Open', user_id: 'hand-3', time: jan(5, 12) },
    { event_type: 'Open', user_id: 'hand-3', time: jan(6, 12) },
    { event_type: 'Play', user_id: 'hand-3', time: jan(7, 12) },
  ];
  expect((await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
  await h.server.store.flush();
  const days = { start: '20260105', end: '20260107', se: OPEN, re: PLAY };
  const cells = (...counts: [number, number][]) => counts.map(([count, outof]) => ({ count, outof, incomplete: false }));
  const nday = (await get(days)).body.data.series[0];
  expect(nday.dates).toEqual(['Jan 07', 'Jan 06', 'Jan 05']);
  expect(nday.values).toEqual({ 'Jan 05': cells([2, 2], [0, 2], [1, 2], [1, 2]), 'Jan 06': cells([1, 1], [1, 1], [0, 1], [0, 1]), 'Jan 07': cells([0, 0], [0, 0], [0, 0], [0, 0]) });
  expect(nday.combined.map((c: { count: number; outof: number }) => [c.count, c.outof])).toEqual([[3, 3], [1, 3], [1, 3], [1, 3]]);
  const rolling = (await get({ ...days, rm: 'rolling' })).body.data.series[0];
  expect(rolling.values['Jan 05']).toEqual(cells([2, 2], [2, 2], [2, 2], [1, 2]));
  expect(rolling.values['Jan 06']).toEqual(cells([1, 1], [1, 1], [0, 1], [0, 1]));
  const brackets = (await get({ ...days, rm: 'bracket', rb: [[0, 2], [2, 4]] })).body.data.series[0];
  expect(brackets.values['Jan 05']).toEqual(cells([2, 2], [1, 2], [2, 2]));
  expect(brackets.values['Jan 06']).toEqual(cells([1, 1], [1, 1], [0, 1]));
});

test('the longest range and the furthest bracket are answered: columns as the range has intervals, none after now', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  const year = await get({ start: '20250321', end: '20260320', se: OPEN, re: OPEN, rm: 'rolling' });
  expect(year.status).toBe(200);
  expect(year.body.data.series[0].dates).toHaveLength(365);
  expect(year.body.data.series[0].values['Mar 01, 2026']).toHaveLength(21);
  expect(year.body.data.series[0].combined).toHaveLength(366);
  const far = await get({ start: '20260101', end: '20260316', se: OPEN, re: OPEN, rm: 'bracket', rb: [[0, 1], [12, 366]], i: 30 });
  expect(far.status).toBe(200);
  expect(far.body.data.series[0].values['Mar 2026']).toHaveLength(2);
});

test('what the service cannot answer is 400, saying why', async () => {
  const refused = async (params: Record<string, unknown>, reason: RegExp) => {
    const answer = await get({ ...MARCH, se: OPEN, re: PLAY, ...params });
    expect(answer.status, JSON.stringify(params)).toBe(400);
    expect(answer.body.error).toMatch(reason);
  };
  await refused({ rm: 'bracket' }, /rm=bracket needs brackets/);
  await refused({ rm: 'bracket', rb: [[0, 5], [3, 8]] }, /bracket 2 \(\[3,8\]\) starts before bracket 1/);
  await refused({ rm: 'bracket', rb: [[2, 2]] }, /bracket 1 \(\[2,2\]\) is empty/);
  await refused({ rm: 'bracket', rb: [[0, 400]] }, /rb/);
  await refused({ rm: 'weekly' }, /rm/);
  await refused({ re: { event_type: '_new' } }, /_new is a start event only/);
  await refused({ se: { event_type: 'Open', group_by: [{ type: 'user', value: 'country' }] } }, /group with g/);
  await refused({ se: '{"event_type":' }, /se/);
  await refused({ i: 2 }, /query parameter i/);
  await refused({ start: '20260231' }, /20260231 is not a date/);
  await refused({ start: '20250101', end: '20260316' }, /at most 365/);
  await refused({ g: 'favourite_colour' }, /query parameter g/);
  const missing = await send(`${h.proxied.app}/api/2/retention?${query({ ...MARCH, se: OPEN })}`, { headers: auth });
  expect(missing.status).toBe(400);
  expect(missing.body.error).toMatch(/re/);
});

test('without credentials or with a wrong secret key: 401', async () => {
  // Without credentials Prism answers itself: to the server directly.
  expect((await send(`${h.server.urls.app}/api/2/retention?${query({ ...MARCH, se: OPEN, re: PLAY })}`)).status).toBe(401);
  const wrong = { authorization: `Basic ${Buffer.from(`${h.project.api_key}:not-the-secret`).toString('base64')}` };
  expect((await get({ ...MARCH, se: OPEN, re: PLAY }, wrong)).status).toBe(401);
});

test('a project sees its own users only', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  const answer = await get({ start: '20260301', end: '20260303', se: OPEN, re: OPEN }, otherAuth);
  expect(answer.status).toBe(200);
  expect(answer.body.data.series[0].values['Mar 01']).toEqual([
    { count: 1, outof: 1, incomplete: false },
    { count: 1, outof: 1, incomplete: false },
    { count: 1, outof: 1, incomplete: false },
    { count: 1, outof: 1, incomplete: false },
  ]);
  expect(answer.body.data.series[0].combined[0].count).toBe(1);
  const own = createOracle(uploads, 'UTC', MAPPINGS);
  expect((await get({ start: '20260301', end: '20260303', se: OPEN, re: OPEN })).body.data).toEqual(retention(own, { start: '20260301', end: '20260303', se: OPEN, re: OPEN }, NOW));
});

test('retention costs 8 per condition-day, a group-by counting 4: over the budget, 429 naming the cost', async () => {
  const segment = [1, 2, 3].map((n) => ({ prop: 'country', op: 'is not', values: [`nowhere-${n}`] }));
  // 1096 days × (3 conditions + 4 for g) × 8.
  const answer = await get({ start: '20240101', end: '20261231', se: OPEN, re: PLAY, i: 7, s: segment, g: 'platform' });
  expect(answer.status).toBe(429);
  expect(answer.body).toMatchObject({ code: 429, exceeded_limit: 'concurrent_cost' });
  expect(answer.body.error).toMatch(/costs 61376;/);
});
