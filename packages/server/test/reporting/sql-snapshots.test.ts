// The SQL each dialect prints for the reporting operations, kept in sql/<operationId>.<engine>.sql
// so that a change to the generated SQL shows in review. The runners run against a context that
// records every statement and answers no rows (no engine); `vitest run -u` rewrites the files.
import { describe, expect, test } from 'vitest';
import { parseFormula } from '../../src/reporting/formula.js';
import { getUserActivity } from '../../src/reporting/operations/getUserActivity.js';
import { getUserSearch } from '../../src/reporting/operations/getUserSearch.js';
import type { OperationEnv } from '../../src/reporting/operations/operation.js';
import { composition } from '../../src/reporting/runners/composition.js';
import type { RunnerContext } from '../../src/reporting/runners/context.js';
import { eventTypeTotals } from '../../src/reporting/runners/event-types.js';
import { funnel } from '../../src/reporting/runners/funnels.js';
import { realtimeActiveUsers } from '../../src/reporting/runners/realtime.js';
import { retention } from '../../src/reporting/runners/retention.js';
import { revenueLtv } from '../../src/reporting/runners/revenue-ltv.js';
import { segmentation, type SegmentationQuery } from '../../src/reporting/runners/segmentation.js';
import { DEFAULT_BINS_MS, dailySessions, sessionLengths } from '../../src/reporting/runners/sessions.js';
import { userCounts } from '../../src/reporting/runners/users.js';
import { type Condition, FILTER_OPERATORS, type PropertyRef, type Segment, userProperty } from '../../src/model/query.js';
import { reportRange } from '../../src/model/time.js';
import { ClickHouseDialect } from '../../src/store/clickhouse/dialect.js';
import type { Dialect } from '../../src/store/dialect.js';
import { DuckDbDialect } from '../../src/store/duckdb/dialect.js';

const APP_ID = 7;
const NOW = Date.UTC(2026, 10, 4, 15, 30);
/** Berlin's clocks go back on 2026-10-25: the range has two offsets. */
const BERLIN = 'Europe/Berlin';

interface Engine {
  name: 'duckdb' | 'clickhouse';
  /** The dialect of a project with or without user mappings (DuckDB: `genre` materialized). */
  dialect(mapped: boolean): Dialect;
}

const ENGINES: Engine[] = [
  { name: 'duckdb', dialect: (mapped) => new DuckDbDialect({ userMappings: mapped, propertyColumns: new Map([['genre', 'ep_genre']]) }) },
  { name: 'clickhouse', dialect: (mapped) => new ClickHouseDialect({ userMappings: mapped }) },
];

interface Case {
  name: string;
  timeZone?: string;
  mapped?: boolean;
  /** Rows answered to a statement (default none). */
  answer?: (sql: string) => Record<string, unknown>[];
  run(ctx: RunnerContext): Promise<unknown>;
}

/** The statements a case runs, in order, each after a comment naming the case. */
async function recorded(engine: Engine, one: Case): Promise<string> {
  const statements: string[] = [];
  const ctx: RunnerContext = {
    appId: APP_ID,
    timeZone: one.timeZone ?? 'UTC',
    dialect: engine.dialect(one.mapped ?? false),
    query: async (sql) => {
      statements.push(sql);
      return one.answer?.(sql) ?? [];
    },
    queryChunks: async function* (sql) {
      statements.push(sql);
    },
    now: () => NOW,
  };
  await one.run(ctx);
  return statements.map((sql, i) => `-- ${one.name} (${i + 1}/${statements.length})\n${sql};\n`).join('\n');
}

const range = (timeZone: string, start: string, end: string) => reportRange(timeZone, start, end);
const event = (name: string): PropertyRef => ({ kind: 'event', name });
const play = { eventType: 'Play', conditions: [] };
const segment: Segment = [
  { property: userProperty('country'), op: 'is', values: ['DE', '(none)'] },
  { property: userProperty('gp:plan'), op: 'is not', values: ['free'] },
  { property: userProperty('paying'), op: 'is', values: ['true'] },
  { cohortId: 'c1', member: true },
  { cohortId: "o'hare", member: false },
];
/** Every filter operator, on event, custom and built-in properties, with a non-number to compare and an escaped quote. */
const everyOperator: Condition[] = FILTER_OPERATORS.map((op, i) => ({
  property: [event('genre'), event('tags'), userProperty('gp:level'), userProperty('version')][i % 4]!,
  op,
  values: op.startsWith('less') || op.startsWith('greater') ? [i % 2 === 0 ? '12.5' : 'ten'] : op.startsWith('set') ? ['a', 'b\\c', "it's"] : ['jazz', "rock'n'roll", '(none)'],
}));

const segmentationBase: SegmentationQuery = { range: range('UTC', '20261102', '20261104'), interval: 'day', events: [play], groupBy: [], segment: [], metric: 'uniques', activeUsersOnly: false, limit: 100 };

/** User search and user activity read no tracking plan. */
const NO_ENV: OperationEnv = { eventTypeNames: () => Promise.reject(new Error('not read')) };

/**
 * Rows for every statement of user activity: svc_ids 11 and 13 have events and 13 is mapped
 * (and merged) into 11, so that the lookups go on to every statement with both. (User search
 * shares them; its own statements are those of a text that matches nothing.)
 */
const userRow = (sql: string) =>
  sql.startsWith('SELECT DISTINCT svc_id')
    ? [{ svc_id: 11 }, { svc_id: 13 }]
    : [{ svc_id: 11, from_svc: 13, to_svc: 11, user_svc_id: 11, first_time: 1, last_time: 2, event_count: 2, session_count: 1, purchases: 0, latest_seq: 5, ingest_seq: 5, app_id: APP_ID, properties: '{}' }];

const CASES: Record<string, Case[]> = {
  getUserCounts: [
    { name: 'active users per day', run: (ctx) => userCounts(ctx, { range: range('UTC', '20261102', '20261104'), metric: 'active', interval: 'day', segment: [] }) },
    {
      name: 'new users per week by gp:plan, segmented, mapped users, across a DST change',
      timeZone: BERLIN,
      mapped: true,
      run: (ctx) => userCounts(ctx, { range: range(BERLIN, '20261019', '20261101'), metric: 'new', interval: 'week', segment, groupBy: userProperty('gp:plan') }),
    },
  ],
  getSessionLengthDistribution: [
    { name: 'default bins', run: (ctx) => sessionLengths(ctx, range('UTC', '20261102', '20261104'), DEFAULT_BINS_MS) },
    { name: 'custom bins, mapped users', mapped: true, timeZone: BERLIN, run: (ctx) => sessionLengths(ctx, range(BERLIN, '20261024', '20261026'), [0, 60_000, 120_000, 180_000]) },
  ],
  getAverageSessionLength: [{ name: 'per day', run: (ctx) => dailySessions(ctx, range('UTC', '20261102', '20261104'), 'averageLength') }],
  getAverageSessionsPerUser: [{ name: 'per day, mapped users', mapped: true, run: (ctx) => dailySessions(ctx, range('UTC', '20261102', '20261104'), 'perUser') }],
  getUserComposition: [
    { name: 'by country', run: (ctx) => composition(ctx, range('UTC', '20261102', '20261104'), userProperty('country')) },
    { name: 'by gp:plan, mapped users', mapped: true, run: (ctx) => composition(ctx, range('UTC', '20261102', '20261104'), userProperty('gp:plan')) },
  ],
  listEventTypeTotals: [{ name: 'this week', timeZone: BERLIN, run: (ctx) => eventTypeTotals(ctx) }],
  getEventSegmentation: [
    {
      name: 'uniques by genre and gp:plan, every filter operator, segmented',
      run: (ctx) => segmentation(ctx, { ...segmentationBase, events: [{ eventType: 'ce:Play', conditions: everyOperator }], groupBy: [event('genre'), userProperty('gp:plan')], segment, limit: 10 }),
    },
    {
      name: 'average per hour, active users only, rolling window and average, mapped users',
      mapped: true,
      timeZone: BERLIN,
      run: (ctx) => segmentation(ctx, { ...segmentationBase, range: range(BERLIN, '20261025', '20261025'), interval: 'hour', metric: 'average', activeUsersOnly: true, rollingWindow: 3, rollingAverage: 2 }),
    },
    {
      name: 'pct_dau, value_avg and a formula',
      run: async (ctx) => {
        await segmentation(ctx, { ...segmentationBase, interval: 'week', metric: 'pct_dau', rollingAverage: 2 });
        await segmentation(ctx, { ...segmentationBase, events: [{ eventType: 'revenue_amount', conditions: [] }], groupBy: [event('price')], metric: 'value_avg' });
        await segmentation(ctx, { ...segmentationBase, events: [play, { eventType: '_all', conditions: [] }], groupBy: [event('seconds')], metric: 'formula', formula: parseFormula('PROPAVG(A) / UNIQUES(B) + PROPMAX(A)') });
      },
    },
    {
      name: 'histogram of seconds',
      answer: (sql) => (sql.includes('AS low') ? [{ low: 1, high: 31 }] : []),
      run: (ctx) => segmentation(ctx, { ...segmentationBase, groupBy: [event('seconds')], metric: 'histogram' }),
    },
  ],
  getFunnel: [
    {
      name: 'ordered, three steps, by country, segmented',
      run: (ctx) =>
        funnel(ctx, { range: range('UTC', '20261102', '20261104'), steps: [play, { eventType: 'Buy', conditions: [everyOperator[4]!] }, play], mode: 'ordered', windowSeconds: 86_400, segment, groupBy: userProperty('country'), limit: 10 }),
    },
    {
      name: 'sequential, two steps, mapped users, across a DST change',
      mapped: true,
      timeZone: BERLIN,
      run: (ctx) => funnel(ctx, { range: range(BERLIN, '20261024', '20261026'), steps: [play, { eventType: 'Buy', conditions: [] }], mode: 'sequential', windowSeconds: 3_600, segment: [], limit: 100 }),
    },
    {
      name: 'unordered, four steps, by gp:plan',
      run: (ctx) =>
        funnel(ctx, { range: range('UTC', '20261102', '20261104'), steps: [play, { eventType: 'Buy', conditions: [] }, { eventType: '_active', conditions: [] }, play], mode: 'unordered', windowSeconds: 2_592_000, segment: [], groupBy: userProperty('gp:plan'), limit: 100 }),
    },
  ],
  getRetention: [
    {
      name: 'n-day per day, Play then a filtered Buy, by country, segmented',
      run: (ctx) =>
        retention(ctx, { range: range('UTC', '20261102', '20261104'), interval: 'day', start: play, returning: { eventType: 'Buy', conditions: [everyOperator[4]!] }, mode: 'nday', brackets: [], segment, groupBy: userProperty('country'), limit: 10 }),
    },
    {
      name: 'rolling per week of new users, mapped users, across a DST change',
      mapped: true,
      timeZone: BERLIN,
      run: (ctx) => retention(ctx, { range: range(BERLIN, '20261019', '20261101'), interval: 'week', start: 'new', returning: { eventType: '_active', conditions: [] }, mode: 'rolling', brackets: [], segment: [], limit: 100 }),
    },
    {
      name: 'brackets per month',
      run: (ctx) => retention(ctx, { range: range('UTC', '20260901', '20261104'), interval: 'month', start: play, returning: play, mode: 'bracket', brackets: [[0, 1], [1, 3]], segment: [], limit: 100 }),
    },
  ],
  getRealtimeActiveUsers: [
    { name: 'today and yesterday per five minutes', run: (ctx) => realtimeActiveUsers(ctx) },
    { name: 'mapped users, in Berlin', mapped: true, timeZone: BERLIN, run: (ctx) => realtimeActiveUsers(ctx) },
  ],
  getRevenueLtv: [
    { name: 'per day, by country, segmented', run: (ctx) => revenueLtv(ctx, { range: range('UTC', '20261102', '20261104'), interval: 'day', segment, groupBy: userProperty('country'), limit: 10 }) },
    { name: 'per week, mapped users, across a DST change', mapped: true, timeZone: BERLIN, run: (ctx) => revenueLtv(ctx, { range: range(BERLIN, '20261019', '20261101'), interval: 'week', segment: [], limit: 100 }) },
  ],
  getUserSearch: [
    { name: 'a text that matches nothing exactly, then as a prefix', run: (ctx) => getUserSearch.answer(ctx, { user: "o'hare\\%_" }, NO_ENV) },
  ],
  getUserActivity: [
    { name: 'a merged svc_id of a mapped user, latest first, from 100', answer: userRow, run: (ctx) => getUserActivity.answer(ctx, { svcId: 13, offset: 100, limit: 50, latestFirst: true }, NO_ENV) },
  ],
};

describe.each(ENGINES)('$name', (engine) => {
  test.each(Object.keys(CASES))('%s', async (operationId) => {
    const statements = await Promise.all(CASES[operationId]!.map((one) => recorded(engine, one)));
    await expect(statements.join('\n')).toMatchFileSnapshot(`sql/${operationId}.${engine.name}.sql`);
  });
});
