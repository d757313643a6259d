// The reporting runners on both engines: the reporting oracle's seeded dataset in DuckDB and
// in ClickHouse 18.16 (Debian's, started for this file on loopback), and each ported runner
// (users, segmentation's measures, sessions, composition, event types, funnels) asked the same
// questions through each engine's dialect, in two project time zones: the answers are equal.
// Added to the dataset: later profile changes, nested and array event properties, a cohort and
// user mappings, so that custom (gp:) properties at event time, start_version and paying,
// cohort segments, mapped users and the set operators are asked too.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseFormula } from '../../../src/reporting/formula.js';
import { ClickHouseDialect, refusalOf } from '../../../src/store/clickhouse/dialect.js';
import { DuckDbDialect } from '../../../src/store/duckdb/dialect.js';
import type { BuiltInUserProperty, PropertyRef } from '../../../src/model/query.js';
import { composition } from '../../../src/reporting/runners/composition.js';
import type { RunnerContext } from '../../../src/reporting/runners/context.js';
import { eventTypeTotals } from '../../../src/reporting/runners/event-types.js';
import { funnel } from '../../../src/reporting/runners/funnels.js';
import { type SegmentationQuery, segmentation } from '../../../src/reporting/runners/segmentation.js';
import { DEFAULT_BINS_MS, dailySessions, sessionLengths } from '../../../src/reporting/runners/sessions.js';
import { userCounts } from '../../../src/reporting/runners/users.js';
import { reportRange } from '../../../src/model/time.js';
import { generateEvents, type UploadEvent } from '../../reporting/dataset.js';
import { type Engines, loadEngines, stored } from './engines.js';

const APP = 7;
const START = Date.UTC(2026, 1, 20);
const DAY = 86_400_000;
// Within the 40 days from Feb 20: New York changes to summer time on Mar 8.
const ZONES = ['UTC', 'America/New_York'];
const NOW = START + 17 * DAY + 15 * 3_600_000;
// A larger dataset and the time of each question on each engine (printed at the end):
// CH_RUNNERS_USERS=20000 CH_RUNNERS_TIMING=1 npx vitest run test/store/clickhouse/runners.test.ts --testTimeout=600000
const USERS = Number(process.env.CH_RUNNERS_USERS ?? 400);
const timings: [string, number, number][] = [];

let engines: Engines;

/**
 * For every third user a later `$identify` (plan and tags change) and a `Nested` event whose
 * nested object holds the top-level keys again; a `Deep` event with an array of arrays. Spread
 * through the generated events, so that profile versions change between a user's events.
 */
function withExtraEvents(generated: UploadEvent[]): UploadEvent[] {
  const extra: UploadEvent[] = [{ event_type: 'Deep', user_id: 'user-0', time: START + DAY, event_properties: { matrix: [['x']] } }];
  for (let i = 0; i < USERS; i += 3) {
    const time = START + ((i * 7) % 35) * DAY + 12 * 3_600_000;
    extra.push({ event_type: '$identify', user_id: `user-${i}`, time, user_properties: { $set: { plan: i % 2 ? 'team' : 'pro', tags: i % 4 ? ['a', 'c'] : ['d'] } } });
    extra.push({ event_type: 'Nested', user_id: `user-${i}`, time: time + 60_000, event_properties: { outer: { category: 'inner', labels: ['q'] }, category: i % 2 ? 'top' : 'shoes', labels: ['x', String(i % 3)] } });
  }
  const every = Math.floor(generated.length / extra.length);
  return generated.flatMap((upload, i) => (i % every === 0 && i / every < extra.length ? [extra[i / every]!, upload] : [upload]));
}

const MAPPINGS = [
  { userId: 'user-1', globalUserId: 'user-2' },
  { userId: 'user-4', globalUserId: 'user-2' },
  { userId: 'user-5', globalUserId: 'user-7' },
];

beforeAll(async () => {
  engines = await loadEngines(withExtraEvents(generateEvents({ users: USERS, startMs: START, days: 40 })).map((upload, i) => stored(upload, i, APP, START + 50 * DAY)), 'runners');
  const thirds = (await engines.duck.query(`SELECT DISTINCT svc_id FROM events WHERE app_id = ${APP} AND svc_id % 3 = 0 ORDER BY svc_id`)).map((r) => Number(r.svc_id));
  for (const engine of [engines.duck, engines.ch]) {
    await engine.replaceCohortMembers(APP, 'thirds', [...thirds, 2]);
    await engine.changeCohortMembers(APP, 'thirds', [{ add: false, svcIds: thirds.slice(0, 6) }, { add: true, svcIds: [thirds[0]!, 2] }]);
    await engine.replaceCohortMembers(APP, 'emptied', [1, 2]);
    await engine.replaceCohortMembers(APP, 'emptied', []);
    await engine.applyUserMappings([APP], MAPPINGS);
    await engine.applyUserMappings([APP], [{ userId: 'user-5', globalUserId: null }]);
  }
}, 1_200_000);

afterAll(async () => {
  await engines?.close();
  if (process.env.CH_RUNNERS_TIMING) console.log(`question\tDuckDB ms\tClickHouse ms\n${timings.map((t) => t.join('\t')).join('\n')}`);
});

function contexts(timeZone: string): [RunnerContext, RunnerContext] {
  const common = { appId: APP, timeZone, now: () => NOW };
  return [
    { ...common, dialect: new DuckDbDialect({ userMappings: true }), query: (sql) => engines.duck.query(sql), queryChunks: (sql) => engines.duck.queryChunks(sql) },
    { ...common, dialect: new ClickHouseDialect(), query: (sql) => engines.ch.query(sql), queryChunks: (sql) => engines.ch.queryChunks(sql) },
  ];
}

/** Both engines' answers to one question: equal, and not empty. */
async function agree<T>(timeZone: string, ask: (ctx: RunnerContext) => Promise<T>, nonEmpty: (answer: T) => boolean): Promise<T> {
  const [onDuck, onClickHouse] = contexts(timeZone);
  let start = performance.now();
  const expected = await ask(onDuck!);
  const duckMs = performance.now() - start;
  expect(nonEmpty(expected), 'the DuckDB answer has data').toBe(true);
  start = performance.now();
  const actual = await ask(onClickHouse!);
  timings.push([expect.getState().currentTestName ?? '', Math.round(duckMs), Math.round(performance.now() - start)]);
  expect(actual).toEqual(expected);
  return expected;
}

interface Answer {
  series: { values: number[]; collapsed: number }[];
}
const counted = (answer: Answer) => answer.series.some((s) => s.collapsed > 0 && s.values.some((v) => v > 0));

const event = (name: string): PropertyRef => ({ kind: 'event', name });
const custom = (name: string): PropertyRef => ({ kind: 'custom', name });
const builtIn = (name: BuiltInUserProperty): PropertyRef => ({ kind: 'builtIn', name });
const selector = (eventType: string, conditions: SegmentationQuery['events'][number]['conditions'] = []) => ({ eventType, conditions });
type Question = Omit<SegmentationQuery, 'range' | 'groupBy' | 'segment' | 'limit' | 'activeUsersOnly'> & Partial<Pick<SegmentationQuery, 'groupBy' | 'segment' | 'limit' | 'activeUsersOnly'>> & { days?: [string, string] };

const SEGMENTATION: [string, Question][] = [
  ['uniques per day', { metric: 'uniques', interval: 'day', events: [selector('View Item')] }],
  ['totals per hour by an event property', { metric: 'totals', interval: 'hour', days: ['20260306', '20260309'], events: [selector('Search')], groupBy: [event('category')] }],
  ['uniques per week by country and os, two events', { metric: 'uniques', interval: 'week', events: [selector('_active'), selector('A')], groupBy: [{ kind: 'builtIn', name: 'country' }, { kind: 'builtIn', name: 'os' }] }],
  ['totals per month of all events, a segment', { metric: 'totals', interval: 'month', events: [selector('_all')], segment: [{ property: { kind: 'builtIn', name: 'country' }, op: 'is not', values: ['Germany'] }] }],
  ['average per day with a condition', { metric: 'average', interval: 'day', events: [selector('Open App', [{ property: event('count'), op: 'greater', values: ['4'] }])] }],
  ['share of daily active users', { metric: 'pct_dau', interval: 'day', events: [selector('B')], groupBy: [{ kind: 'builtIn', name: 'platform' }] }],
  ['sums of a property', { metric: 'sums', interval: 'day', events: [selector('Open App')], groupBy: [event('count')] }],
  ['average value of a property', { metric: 'value_avg', interval: 'week', events: [selector('Search')], groupBy: [event('count')] }],
  ['histogram of a property', { metric: 'histogram', interval: 'day', events: [selector('Share')], groupBy: [event('count')] }],
  ['formula of both events', { metric: 'formula', interval: 'day', events: [selector('A'), selector('C')], formula: parseFormula('UNIQUES(B) / UNIQUES(A) + PROPSUM(A) - PROPMAX(A) + PROPMIN(B) + ACTIVE(A) + AVG(B)'), groupBy: [event('step_index')] }],
  ['rolling window of uniques by category', { metric: 'uniques', interval: 'day', rollingWindow: 7, events: [selector('View Item')], groupBy: [event('category')] }],
  ['rolling average of totals', { metric: 'totals', interval: 'week', rollingAverage: 3, events: [selector('Share')] }],
  ['uniques per day by a custom property that changes', { metric: 'uniques', interval: 'day', events: [selector('_active')], groupBy: [custom('plan')] }],
  ['totals per week, a custom array set is', { metric: 'totals', interval: 'week', events: [selector('_all')], segment: [{ property: custom('tags'), op: 'set is', values: ['a', 'c'] }], groupBy: [custom('plan')] }],
  ['a custom number and the event\'s own user property', { metric: 'totals', interval: 'day', events: [selector('_all', [{ property: custom('logins'), op: 'greater or equal', values: ['1'] }])], groupBy: [custom('variant')] }],
  ['set is not on an event array', { metric: 'totals', interval: 'day', events: [selector('Search', [{ property: event('labels'), op: 'set is not', values: ['z'] }])], groupBy: [event('labels')] }],
  ['nested event properties are not top-level ones', { metric: 'totals', interval: 'week', events: [selector('Nested', [{ property: event('labels'), op: 'set is', values: ['0', 'x'] }])], groupBy: [event('category'), event('labels')] }],
  ['start_version and paying', { metric: 'uniques', interval: 'week', events: [selector('_active')], groupBy: [builtIn('start_version'), builtIn('paying')] }],
  ['paying users by plan', { metric: 'totals', interval: 'day', events: [selector('_all')], segment: [{ property: builtIn('paying'), op: 'is', values: ['true'] }], groupBy: [custom('plan')] }],
  ['cohort members', { metric: 'uniques', interval: 'day', events: [selector('A'), selector('B')], segment: [{ cohortId: 'thirds', member: true }] }],
  ['not cohort members, start_version and gp: together', { metric: 'uniques', interval: 'week', events: [selector('_active')], segment: [{ cohortId: 'thirds', member: false }, { property: builtIn('start_version'), op: 'is not', values: ['2.0'] }], groupBy: [custom('plan')] }],
  ['active users only, a limit', { metric: 'uniques', interval: 'day', activeUsersOnly: true, limit: 2, events: [selector('_all')], groupBy: [{ kind: 'builtIn', name: 'language' }] }],
];

describe.each(ZONES)('project time zone %s', (timeZone) => {
  const range = reportRange(timeZone, '20260220', '20260331');

  describe('segmentation', () => {
    for (const [name, { days, ...question }] of SEGMENTATION) {
      test(name, async () => {
        const query: SegmentationQuery = { groupBy: [], segment: [], limit: 100, activeUsersOnly: false, ...question, range: days ? reportRange(timeZone, ...days) : range };
        await agree(timeZone, (ctx) => segmentation(ctx, query), counted);
      });
    }
  });

  test.each([
    ['active', 'day', undefined],
    ['active', 'week', { kind: 'builtIn', name: 'device_type' }],
    ['new', 'day', event('category')],
    ['new', 'month', undefined],
    ['active', 'day', custom('plan')],
    ['new', 'week', builtIn('paying')],
  ] as const)('users: %s per %s by %o', async (metric, interval, groupBy) => {
    await agree(timeZone, (ctx) => userCounts(ctx, { range, metric, interval, segment: [], groupBy }), counted);
  });

  test('users: active in a cohort by start_version', async () => {
    await agree(timeZone, (ctx) => userCounts(ctx, { range, metric: 'active', interval: 'week', segment: [{ cohortId: 'thirds', member: true }], groupBy: builtIn('start_version') }), counted);
  });

  test('session lengths', async () => {
    await agree(timeZone, (ctx) => sessionLengths(ctx, range, DEFAULT_BINS_MS), (answer) => answer.counts.filter((n) => n > 0).length > 3);
  });

  test.each(['averageLength', 'perUser'] as const)('daily sessions: %s', async (measure) => {
    await agree(timeZone, (ctx) => dailySessions(ctx, range, measure), counted);
  });

  test.each([{ kind: 'builtIn', name: 'country' }, event('category'), event('count')] as PropertyRef[])('composition by %o', async (property) => {
    await agree(timeZone, (ctx) => composition(ctx, range, property), (answer) => answer.values.length > 1);
  });

  test.each([
    ['three steps, two-day window', [selector('A'), selector('B'), selector('C')], 2 * 86_400, undefined],
    ['by a property, a condition, a one-day window', [selector('A'), selector('B', [{ property: event('step_index'), op: 'less', values: ['2'] }]), selector('C')], 86_400, event('step_index')],
    ['noise then a step, by country', [selector('View Item'), selector('A')], 30 * 86_400, { kind: 'builtIn', name: 'country' }],
    ['by a property that is often missing', [selector('View Item'), selector('Search')], 7 * 86_400, event('category')],
    ['by a custom property, a set condition', [selector('A'), selector('B', [{ property: custom('tags'), op: 'set is', values: ['b'] }])], 7 * 86_400, custom('plan')],
  ] as const)('unordered funnel: %s', async (_, steps, windowSeconds, groupBy) => {
    const query = { range, steps: [...steps], mode: 'unordered' as const, windowSeconds, segment: [], groupBy: groupBy as PropertyRef | undefined, limit: 10 };
    await agree(timeZone, (ctx) => funnel(ctx, query), (answer) => answer.groups.some((g) => g.total.reached.at(-1)! > 0 && g.byDay.some((d) => d.reached[0]! > 0)));
  });

  // Ordered and sequential funnels: DuckDB joins each step's next event (ASOF JOIN); ClickHouse
  // 18.16 has none and follows each entry's path with array functions (`chainedFunnel`).
  test.each([
    ['ordered, two steps, one hour', 'ordered', [selector('A'), selector('B')], 3_600, undefined],
    ['ordered, three steps, two-day window', 'ordered', [selector('A'), selector('B'), selector('C')], 2 * 86_400, undefined],
    ['ordered, four steps from noise, 30 days, by country', 'ordered', [selector('View Item'), selector('A'), selector('B'), selector('C')], 30 * 86_400, { kind: 'builtIn', name: 'country' }],
    ['ordered, a condition, ten minutes, by a property', 'ordered', [selector('A'), selector('B', [{ property: event('step_index'), op: 'less', values: ['2'] }]), selector('C')], 600, event('step_index')],
    ['ordered, repeated step, one day', 'ordered', [selector('A'), selector('A'), selector('B')], 86_400, undefined],
    // An event of both steps is no step after itself (the last step's events of its own moment).
    ['ordered, one step twice, one hour', 'ordered', [selector('A'), selector('A')], 3_600, undefined],
    ['sequential, two steps, one day', 'sequential', [selector('A'), selector('B')], 86_400, undefined],
    ['sequential, three steps, 30 days, by a property that is often missing', 'sequential', [selector('A'), selector('B'), selector('C')], 30 * 86_400, event('category')],
    ['sequential, four steps, seven days', 'sequential', [selector('View Item'), selector('A'), selector('B'), selector('C')], 7 * 86_400, undefined],
    ['ordered, by paying, a custom condition', 'ordered', [selector('A', [{ property: custom('plan'), op: 'is not', values: ['free'] }]), selector('B')], 86_400, builtIn('paying')],
  ] as const)('funnel: %s', async (_, mode, steps, windowSeconds, groupBy) => {
    const query = { range, steps: [...steps], mode, windowSeconds, segment: [], groupBy: groupBy as PropertyRef | undefined, limit: 10 };
    await agree(timeZone, (ctx) => funnel(ctx, query), (answer) => answer.groups.some((g) => g.total.reached.at(-1)! > 0 && g.byDay.some((d) => d.reached[0]! > 0)));
  });

  test('event types of the current week', async () => {
    await agree(timeZone, (ctx) => eventTypeTotals(ctx), (answer) => answer.some((t) => t.totals > 0) && answer.some((t) => t.nonActive));
  });
});

test('cohort memberships and sizes agree', async () => {
  for (const cohort of ['thirds', 'emptied', 'none']) expect(await engines.ch.cohortMembers(APP, cohort)).toEqual(await engines.duck.cohortMembers(APP, cohort));
  expect((await engines.duck.cohortMembers(APP, 'thirds')).length).toBeGreaterThan(10);
  expect(await engines.ch.cohortSizes(APP)).toEqual(await engines.duck.cohortSizes(APP));
});

test('set is on an array of arrays: an error on ClickHouse, not a wrong answer', async () => {
  const range = reportRange('UTC', '20260220', '20260331');
  const query: SegmentationQuery = { metric: 'totals', interval: 'day', events: [selector('Deep', [{ property: event('matrix'), op: 'set is', values: ['x'] }])], groupBy: [], segment: [], limit: 10, activeUsersOnly: false, range };
  const [, onClickHouse] = contexts('UTC');
  const failure = await segmentation(onClickHouse!, query).then(() => undefined, (error: unknown) => error);
  expect(refusalOf(failure)).toBe('set operators on arrays that hold arrays or objects');
});
