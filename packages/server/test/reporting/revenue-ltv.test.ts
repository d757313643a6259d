// `/api/2/revenue/ltv` against its independent oracle (revenue-ltv-oracle.ts): generated users
// over 100 days who buy (price × quantity, a sent revenue, `$revenue`, refunds), start on
// anonymous devices, merge and are mapped (/usermap), in time zones whose days are not UTC's;
// the four metrics by day, week and month, with a segment and a group-by; "now" inside the
// data, so newer cohorts lack the longer windows. Every answer goes through the Prism proxy
// (checked against the spec). Then by hand, what is refused (400), the credentials (401), the
// cost and the projects kept apart.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Harness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';
import { agreesWithOracle, queryString as query, startCohortProject, visitingUsers } from './cohort-project.js';
import type { UploadEvent } from './dataset.js';
import { createOracle } from './oracle.js';
import { type LtvParams, revenueLtv } from './revenue-ltv-oracle.js';

const DAY = 86_400_000;
const FIRST_DAY = Date.UTC(2026, 0, 1);
// Sunday 2026-04-05, noon UTC: cohorts after the first days of January lack r90d.
const NOW = FIRST_DAY + 94 * DAY + 12 * 3_600_000;
const MAPPINGS = [
  { userId: 'user-3', globalUserId: 'user-4' },
  { userId: 'user-10', globalUserId: 'user-11' },
];

/** A purchase in one of the shapes ingestion reads revenue from (and a refund now and then). */
function purchase(random: () => number): Partial<UploadEvent> {
  const shape = Math.floor(random() * 4);
  if (shape === 0) return { price: 4.99, quantity: 1 + Math.floor(random() * 3) };
  if (shape === 1) return { revenue: 9.99 };
  if (shape === 2) return { event_properties: { $revenue: 1.25 } };
  return { price: -4.99 };
}

/** Users over 100 days, new on one of the first 60; three in four buy on some visits. */
function generate(seed: number, users: number): UploadEvent[] {
  return visitingUsers({ seed, users, firstDayMs: FIRST_DAY, newDays: 60, days: 100, skip: 0.8 }, (k, random, at, id, who) =>
    k % 4 !== 3 && random() < 0.35 ? [{ event_type: 'Purchase', time: at + 60_000, ...id, ...who, ...purchase(random) }] : [],
  );
}

let h: Harness;
let auth: Record<string, string>;
let otherAuth: Record<string, string>;
const uploads = generate(11, 80);
// The other project: one paying user, who must not show in this project's answers.
const OTHER_EVENTS = [{ event_type: 'Purchase', user_id: 'user-1', time: FIRST_DAY + 3_600_000, revenue: 100 }];

beforeAll(async () => {
  ({ h, auth, otherAuth } = await startCohortProject(uploads, OTHER_EVENTS, MAPPINGS, NOW));
}, 120_000);
afterAll(() => h?.close());

const get = (params: Record<string, unknown>, headers = auth) => send(`${h.proxied.app}/api/2/revenue/ltv?${query(params)}`, { headers });

const WINTER = { start: '20260101', end: '20260220' };
const questions: [string, LtvParams][] = [
  ['ARPU by day (the default metric)', { ...WINTER }],
  ['ARPPU by day', { ...WINTER, m: 1 }],
  ['total revenue by week', { ...WINTER, m: 2, i: 7 }],
  ['paying users by month', { start: '20260101', end: '20260331', m: 3, i: 30 }],
  ['total revenue by week, by platform, in a segment', { ...WINTER, m: 2, i: 7, g: 'platform', s: [{ prop: 'country', op: 'is not', values: ['Japan'] }] }],
  ['ARPU by country, limit 2', { ...WINTER, g: 'country', limit: 2 }],
  ['a range reaching past now', { start: '20260320', end: '20260410', m: 2 }],
];

agreesWithOracle({ project: () => ({ h, auth, otherAuth }), uploads, mappings: MAPPINGS }, questions, (params) => get({ ...params }), (oracle, params) => revenueLtv(oracle, params, NOW));

test('the answers are not trivial: paying users, mapped users counted once, windows cut by now', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  // Every user is new from Jan 1 to Mar 31 (their first days are the first 60 of the data).
  const { series } = (await get({ start: '20260101', end: '20260331', m: 2 })).body.data;
  const cohorts = Object.values(series[0].values) as Record<string, number>[];
  expect(cohorts.some((c) => c.r90d !== undefined)).toBe(true);
  expect(cohorts.some((c) => c.r90d === undefined && c.r30d !== undefined)).toBe(true);
  expect(cohorts.reduce((sum, c) => sum + c.paid!, 0)).toBeGreaterThan(10);
  // Each mapped user is one user with its global user.
  const users = (mappings: typeof MAPPINGS) => new Set(createOracle(uploads, 'UTC', mappings).events.map((r) => r.svcId)).size;
  expect(users(MAPPINGS)).toBe(users([]) - MAPPINGS.length);
  expect(cohorts.reduce((sum, c) => sum + c.count!, 0)).toBe(users(MAPPINGS));
});

test('by hand: days from each user\'s first day, the windows of a cohort\'s last user, refunds, the four metrics', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  const nov = (day: number, hour: number) => Date.UTC(2025, 10, day, hour);
  const events = [
    // hand-1, new on Nov 3: 10 on its first day, 5 on its second, a refund of 2 on its eighth.
    { event_type: 'Open', user_id: 'hand-1', time: nov(3, 9) },
    { event_type: 'Buy', user_id: 'hand-1', time: nov(3, 23), revenue: 10 },
    { event_type: 'Buy', user_id: 'hand-1', time: nov(4, 0), price: 2.5, quantity: 2 },
    { event_type: 'Buy', user_id: 'hand-1', time: nov(10, 12), price: -2 },
    // hand-2, new on Nov 5 (the same week), pays nothing.
    { event_type: 'Open', user_id: 'hand-2', time: nov(5, 9) },
    // hand-3, new on Nov 4, pays 3 on its third day.
    { event_type: 'Open', user_id: 'hand-3', time: nov(4, 9) },
    { event_type: 'Buy', user_id: 'hand-3', time: nov(6, 9), event_properties: { $revenue: 3 } },
  ];
  expect((await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events })).status).toBe(200);
  await h.server.store.flush();
  const daily = (await get({ start: '20251103', end: '20251105', m: 2 })).body.data;
  expect(daily.seriesLabels).toEqual(['']);
  expect(daily.series[0].dates).toEqual(['2025-11-05', '2025-11-04', '2025-11-03']);
  expect(daily.series[0].values['2025-11-03']).toEqual({ r1d: 10, r2d: 15, r3d: 15, r4d: 15, r5d: 15, r6d: 15, r7d: 15, r14d: 13, r30d: 13, r60d: 13, r90d: 13, count: 1, paid: 1, total_amount: 13 });
  expect(daily.series[0].values['2025-11-04']).toMatchObject({ r1d: 0, r2d: 0, r3d: 3, r90d: 3, count: 1, paid: 1, total_amount: 3 });
  expect(daily.series[0].values['2025-11-05']).toMatchObject({ r1d: 0, r90d: 0, count: 1, paid: 0, total_amount: 0 });
  // Weekly (Monday Nov 3): three users; ARPU 15/3 over two days, ARPPU (10+5+3)/2 over three, paying users.
  const week = { start: '20251103', end: '20251109', i: 7 };
  expect((await get({ ...week, m: 0 })).body.data.series[0].values['2025-11-03']).toMatchObject({ r1d: 3.333333, r2d: 5, count: 3, paid: 2, total_amount: 16 });
  expect((await get({ ...week, m: 1 })).body.data.series[0].values['2025-11-03']).toMatchObject({ r1d: 10, r2d: 15, r3d: 9, r14d: 8 });
  expect((await get({ ...week, m: 3 })).body.data.series[0].values['2025-11-03']).toMatchObject({ r1d: 1, r2d: 1, r3d: 2, r90d: 2 });
});

test('a cohort shows a window once its last user\'s first N days have ended', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  // Now is Sunday Apr 5, noon: the week of Mar 30 ends today, its last day Apr 5 has not.
  const thisWeek = (await get({ start: '20260330', end: '20260405', i: 7 })).body.data.series[0].values['2026-03-30'];
  expect(Object.keys(thisWeek)).toEqual(['count', 'paid', 'total_amount']);
  // The range ends on Apr 1: its last day has ended, the first three days after it have begun.
  const cut = (await get({ start: '20260330', end: '20260401', i: 7 })).body.data.series[0].values['2026-03-30'];
  expect(Object.keys(cut)).toEqual(['r1d', 'r2d', 'r3d', 'r4d', 'count', 'paid', 'total_amount']);
});

test('what the service cannot answer is 400, saying why', async () => {
  const refused = async (params: Record<string, unknown>, reason: RegExp) => {
    const answer = await get({ ...WINTER, ...params });
    expect(answer.status, JSON.stringify(params)).toBe(400);
    expect(answer.body.error).toMatch(reason);
  };
  await refused({ m: 4 }, /query parameter m/);
  await refused({ m: 'arpu' }, /query parameter m/);
  await refused({ i: 2 }, /query parameter i/);
  await refused({ start: '20260231' }, /20260231 is not a date/);
  await refused({ start: '20250101', end: '20260316' }, /at most 365/);
  await refused({ g: 'favourite_colour' }, /query parameter g/);
  await refused({ limit: 0 }, /query parameter limit/);
  const missing = await send(`${h.proxied.app}/api/2/revenue/ltv?${query({ start: '20260101' })}`, { headers: auth });
  expect(missing.status).toBe(400);
  expect(missing.body.error).toMatch(/end/);
});

test('without credentials or with a wrong secret key: 401', async () => {
  expect((await send(`${h.server.urls.app}/api/2/revenue/ltv?${query(WINTER)}`)).status).toBe(401);
  const wrong = { authorization: `Basic ${Buffer.from(`${h.project.api_key}:not-the-secret`).toString('base64')}` };
  expect((await get(WINTER, wrong)).status).toBe(401);
});

test('a project sees its own users and revenue only', async () => {
  h.server.tenancy.setTimeZone(h.project.app_id, 'UTC');
  const answer = await get({ start: '20260101', end: '20260101', m: 2 }, otherAuth);
  expect(answer.status).toBe(200);
  expect(answer.body.data.series[0].values['2026-01-01']).toMatchObject({ r1d: 100, r90d: 100, count: 1, paid: 1, total_amount: 100 });
  const own = createOracle(uploads, 'UTC', MAPPINGS);
  expect((await get({ start: '20260101', end: '20260101', m: 2 })).body.data).toEqual(revenueLtv(own, { start: '20260101', end: '20260101', m: 2 }, NOW));
});

test('the cost is days × conditions × 1, a group-by counting 4: over the budget, 429 naming the cost', async () => {
  const segment = (n: number) => Array.from({ length: n }, (_, k) => ({ prop: 'country', op: 'is not', values: [`nowhere-${k}`] }));
  const three = { start: '20240101', end: '20261231', i: 7 };
  // 1096 days × (42 conditions + 4 for g) = 50,416, over the 50,000 per five minutes.
  const over = await get({ ...three, s: segment(42), g: 'platform' });
  expect(over.status).toBe(429);
  expect(over.body).toMatchObject({ code: 429, exceeded_limit: 'concurrent_cost' });
  expect(over.body.error).toMatch(/costs 50416;/);
  // 1096 days × 50 conditions, without g.
  const ungrouped = await get({ ...three, s: segment(50) });
  expect(ungrouped.status).toBe(429);
  expect(ungrouped.body.error).toMatch(/costs 54800;/);
  // Within the budget: answered.
  expect((await get({ ...three, s: segment(3), g: 'platform' })).status).toBe(200);
});
