// The server's reporting answers against the independent oracle (oracle.ts) on a seeded
// dataset sent through /batch: every operation, in two project time zones, over ranges
// that cross week and month edges. Answers reach the test through the Prism proxy, so each
// one also conforms to the spec. Counts must be equal; fractions may differ in the last
// bits only (the engine sums in another order).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { postJson, send } from '../support/http.js';
import { generateBatches, type UploadEvent } from './dataset.js';
import * as oracle from './oracle.js';
import { retention, type RetentionParams } from './retention-oracle.js';

let h: Harness;
let auth: Record<string, string>;
const uploads: UploadEvent[] = [];
const unlimited = { concurrentRequests: 1000, costPerFiveMinutes: Number.MAX_SAFE_INTEGER, costPerHour: Number.MAX_SAFE_INTEGER };
// Friday 2026-02-27: `events/list` counts the week of "now".
const NOW = Date.UTC(2026, 1, 27, 12);

beforeAll(async () => {
  h = await startHarness(['ingest', 'app'], { reportingLimits: unlimited, clock: () => NOW });
  auth = { authorization: `Basic ${Buffer.from(`${h.project.api_key}:${h.project.secret_key}`).toString('base64')}` };
  for (const batch of generateBatches({ users: 1500 })) {
    uploads.push(...batch);
    const answer = await postJson(`${h.direct}/batch`, { api_key: h.project.api_key, events: batch });
    expect(answer.status).toBe(200);
  }
  await h.server.store.flush();
}, 180_000);
afterAll(() => h?.close());

/** Query parameters as the API takes them: objects and arrays of objects as JSON, repeated for funnels' `e`. */
function queryString(params: Record<string, unknown>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    for (const item of name === 'e' && Array.isArray(value) ? value : [value]) query.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item));
  }
  return query.toString();
}

async function answer(path: string, params: Record<string, unknown>): Promise<unknown> {
  const reply = await send(`${h.proxied.app}${path}?${queryString(params)}`, { headers: auth });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return (reply.body as { data: unknown }).data;
}

/** `actual` holds `expected`: the same numbers (fractions to 1e-9 relative), arrays of the same length, objects with at least its keys. */
function expectAgreement(actual: unknown, expected: unknown, where = 'data'): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    if (Number.isInteger(expected)) expect(actual, where).toBe(expected);
    else expect(Math.abs(actual - expected), `${where}: ${actual} vs ${expected}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)));
  } else if (Array.isArray(expected)) {
    expect(Array.isArray(actual), `${where} is an array`).toBe(true);
    expect((actual as unknown[]).length, `${where}.length`).toBe(expected.length);
    expected.forEach((item, i) => expectAgreement((actual as unknown[])[i], item, `${where}[${i}]`));
  } else if (expected !== null && typeof expected === 'object') {
    expect(actual !== null && typeof actual === 'object', `${where} is an object`).toBe(true);
    for (const [key, value] of Object.entries(expected)) expectAgreement((actual as Record<string, unknown>)[key], value, `${where}.${key}`);
  } else expect(actual, where).toEqual(expected);
}

// Mon 2026-01-19 … Sun 2026-03-01; the ranges cross month ends and start mid-week.
const MONTH_EDGE = { start: '20260128', end: '20260210' };
const WIDE = { start: '20260121', end: '20260227' };
const A = { event_type: 'A' };
const B = { event_type: 'B' };
const C = { event_type: 'C' };
const segment: oracle.Segment[] = [{ prop: 'country', op: 'is', values: ['United States', 'Japan'] }];
const filters: oracle.Filter[][] = [
  [{ subprop_type: 'event', subprop_key: 'category', subprop_op: 'is', subprop_value: ['shoes'] }],
  [{ subprop_type: 'event', subprop_key: 'category', subprop_op: 'is not', subprop_value: ['shoes'] }],
  [{ subprop_type: 'event', subprop_key: 'category', subprop_op: 'contains', subprop_value: ['ha'] }],
  [{ subprop_type: 'event', subprop_key: 'category', subprop_op: 'does not contain', subprop_value: ['ha'] }],
  [{ subprop_type: 'event', subprop_key: 'count', subprop_op: 'less', subprop_value: ['3'] }],
  [{ subprop_type: 'event', subprop_key: 'count', subprop_op: 'less or equal', subprop_value: ['3'] }],
  [{ subprop_type: 'event', subprop_key: 'count', subprop_op: 'greater', subprop_value: ['6'] }],
  [{ subprop_type: 'event', subprop_key: 'count', subprop_op: 'greater or equal', subprop_value: ['6'] }],
  [{ subprop_type: 'user', subprop_key: 'gp:tags', subprop_op: 'set is', subprop_value: ['a', 'b'] }],
  [{ subprop_type: 'user', subprop_key: 'gp:tags', subprop_op: 'set is not', subprop_value: ['b'] }],
];

type Question = [name: string, path: string, params: Record<string, unknown>, expected: (o: oracle.Oracle) => unknown];

const questions: Question[] = [
  ['active users per day', '/api/2/users', { ...MONTH_EDGE, m: 'active', i: 1 }, (o) => oracle.users(o, { ...MONTH_EDGE, m: 'active', i: 1 })],
  ['new users per week by platform', '/api/2/users', { ...WIDE, m: 'new', i: 7, g: 'platform' }, (o) => oracle.users(o, { ...WIDE, m: 'new', i: 7, g: 'platform' })],
  ['active users per month in a segment by plan', '/api/2/users', { ...WIDE, m: 'active', i: 30, s: segment, g: 'gp:plan' }, (o) => oracle.users(o, { ...WIDE, m: 'active', i: 30, s: segment, g: 'gp:plan' })],
  ['session lengths, default bins', '/api/2/sessions/length', MONTH_EDGE, (o) => oracle.sessionLength(o, MONTH_EDGE)],
  [
    'session lengths, custom bins',
    '/api/2/sessions/length',
    { ...MONTH_EDGE, timeHistogramConfigBinMin: 0, timeHistogramConfigBinMax: 30, timeHistogramConfigBinSize: 5, timeHistogramConfigBinTimeUnit: 'minutes' },
    (o) => oracle.sessionLength(o, { ...MONTH_EDGE, timeHistogramConfigBinMin: 0, timeHistogramConfigBinMax: 30, timeHistogramConfigBinSize: 5, timeHistogramConfigBinTimeUnit: 'minutes' }),
  ],
  ['average session length', '/api/2/sessions/average', MONTH_EDGE, (o) => oracle.sessionAverage(o, MONTH_EDGE)],
  ['sessions per user', '/api/2/sessions/peruser', MONTH_EDGE, (o) => oracle.sessionsPerUser(o, MONTH_EDGE)],
  ['composition by version', '/api/2/composition', { ...WIDE, p: 'version' }, (o) => oracle.composition(o, { ...WIDE, p: 'version' })],
  ['composition by start_version', '/api/2/composition', { ...WIDE, p: 'start_version' }, (o) => oracle.composition(o, { ...WIDE, p: 'start_version' })],
  [
    'paying users per week by start_version',
    '/api/2/users',
    { ...WIDE, m: 'active', i: 7, s: [{ prop: 'paying', op: 'is', values: ['true'] }], g: 'start_version' },
    (o) => oracle.users(o, { ...WIDE, m: 'active', i: 7, s: [{ prop: 'paying', op: 'is', values: ['true'] }], g: 'start_version' }),
  ],
  ['composition by a user property', '/api/2/composition', { ...WIDE, p: 'gp:plan' }, (o) => oracle.composition(o, { ...WIDE, p: 'gp:plan' })],
  ['events list', '/api/2/events/list', {}, (o) => sortedByValue(oracle.eventsList(o, NOW))],
  ...filters.map(([filter]): Question => [`uniques with ${filter!.subprop_op}`, '/api/2/events/segmentation', { ...MONTH_EDGE, e: { event_type: '_all', filters: [filter] } }, (o) => oracle.segmentation(o, { ...MONTH_EDGE, e: { event_type: '_all', filters: [filter!] } })]),
  ...(['uniques', 'totals', 'pct_dau', 'average'] as const).map((m): Question => [`${m} of A per day`, '/api/2/events/segmentation', { ...MONTH_EDGE, e: A, m }, (o) => oracle.segmentation(o, { ...MONTH_EDGE, e: A, m })]),
  ...(['sums', 'value_avg'] as const).map((m): Question => [`${m} of count by category`, '/api/2/events/segmentation', { ...MONTH_EDGE, e: { event_type: 'Open App', group_by: [{ type: 'event', value: 'count' }] }, m }, (o) => oracle.segmentation(o, { ...MONTH_EDGE, e: { event_type: 'Open App', group_by: [{ type: 'event', value: 'count' }] }, m })]),
  ['revenue events per week', '/api/2/events/segmentation', { ...WIDE, e: { event_type: 'revenue_amount' }, m: 'totals', i: 7 }, (o) => oracle.segmentation(o, { ...WIDE, e: { event_type: 'revenue_amount' }, m: 'totals', i: 7 })],
  ['_active per month, n=active', '/api/2/events/segmentation', { ...WIDE, e: { event_type: '_active' }, i: 30, n: 'active' }, (o) => oracle.segmentation(o, { ...WIDE, e: { event_type: '_active' }, i: 30, n: 'active' })],
  ['hourly totals of A and B', '/api/2/events/segmentation', { start: '20260201', end: '20260202', e: A, e2: B, m: 'totals', i: -3600000 }, (o) => oracle.segmentation(o, { start: '20260201', end: '20260202', e: A, e2: B, m: 'totals', i: -3600000 })],
  [
    'two group-bys, a segment and a limit',
    '/api/2/events/segmentation',
    { ...MONTH_EDGE, e: { event_type: 'Search', group_by: [{ type: 'user', value: 'platform' }, { type: 'user', value: 'gp:plan' }] }, s: segment, limit: 5 },
    (o) => oracle.segmentation(o, { ...MONTH_EDGE, e: { event_type: 'Search', group_by: [{ type: 'user', value: 'platform' }, { type: 'user', value: 'gp:plan' }] }, s: segment, limit: 5 }),
  ],
  ['rolling window of 7 days', '/api/2/events/segmentation', { ...MONTH_EDGE, e: A, rollingWindow: 7 }, (o) => oracle.segmentation(o, { ...MONTH_EDGE, e: A, rollingWindow: 7 })],
  ['rolling average of 3 days', '/api/2/events/segmentation', { ...MONTH_EDGE, e: A, m: 'totals', rollingAverage: 3 }, (o) => oracle.segmentation(o, { ...MONTH_EDGE, e: A, m: 'totals', rollingAverage: 3 })],
  ['a formula', '/api/2/events/segmentation', { ...MONTH_EDGE, e: A, e2: C, m: 'formula', formula: 'UNIQUES(B)/UNIQUES(A)' }, (o) => oracle.segmentation(o, { ...MONTH_EDGE, e: A, e2: C, m: 'formula', formula: 'UNIQUES(B)/UNIQUES(A)' })],
  ...(['ordered', 'sequential', 'unordered'] as const).map((mode): Question => [`${mode} funnel A → B → C, one day`, '/api/2/funnels', { ...MONTH_EDGE, e: [A, B, C], mode, cs: 86_400 }, (o) => oracle.funnels(o, { ...MONTH_EDGE, e: [A, B, C], mode, cs: 86_400 })]),
  ['ordered funnel by platform in a segment, 30 minutes', '/api/2/funnels', { ...WIDE, e: [A, B], s: segment, g: 'platform', cs: 1_800 }, (o) => oracle.funnels(o, { ...WIDE, e: [A, B], s: segment, g: 'platform', cs: 1_800 })],
  ...([
    ['n-day retention A → B', { ...MONTH_EDGE, se: A, re: B }],
    ['rolling weekly retention of new users by platform', { ...WIDE, se: { event_type: '_new' }, re: { event_type: '_active' }, rm: 'rolling', i: 7, g: 'platform' }],
    ['bracket retention in a segment', { ...WIDE, se: { event_type: '_active' }, re: C, rm: 'bracket', rb: [[0, 1], [1, 7], [7, 30]], s: segment }],
  ] as [string, RetentionParams][]).map(([name, params]): Question => [name, '/api/2/retention', { ...params }, (o) => retention(o, params, NOW)]),
];

function sortedByValue<T extends { value: string }>(types: T[]): T[] {
  return [...types].sort((a, b) => (a.value < b.value ? -1 : 1));
}

describe.each(['UTC', 'America/Los_Angeles'])('in %s', (timeZone) => {
  let o: oracle.Oracle;
  beforeAll(() => {
    h.server.tenancy.setTimeZone(h.project.app_id, timeZone);
    o = oracle.createOracle(uploads, timeZone);
  });

  test.each(questions)('%s', async (name, path, params, expected) => {
    const data = await answer(path, params);
    expectAgreement(name === 'events list' ? sortedByValue(data as { value: string }[]) : data, expected(o));
  });
});
