// Funnels and plain counts from the DuckDB engine's per-user timelines (store/timelines/timelines.ts,
// store/timelines/funnel.ts, store/timelines/counts.ts) answer exactly as the SQL path does:
// the seeded dataset's funnels in every mode and two time zones, then the cases the timelines
// must follow (same-time events, users merged after both had events, late events, a deletion
// scrub, a window past the range's end, DST days); the seeded dataset's segmentations and user
// counts in every interval. Then the timelines' own operations.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DuckDbDialect } from '../../../src/store/duckdb/dialect.js';
import type { RunnerContext } from '../../../src/reporting/runners/context.js';
import { funnel } from '../../../src/reporting/runners/funnels.js';
import type { FunnelQuery } from '../../../src/model/funnel-times.js';
import { segmentation, type SegmentationMetric } from '../../../src/reporting/runners/segmentation.js';
import { userCounts } from '../../../src/reporting/runners/users.js';
import { reportRange } from '../../../src/model/time.js';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { timelineCounts } from '../../../src/store/timelines/counts.js';
import { FunnelThread } from '../../../src/store/timelines/funnel-helper.js';
import { type ColumnsShare, timelineFunnel } from '../../../src/store/timelines/funnel.js';
import { ProjectTimelines, type Timeline, TimelineBuilder, typeRuns, UserTimelines } from '../../../src/store/timelines/timelines.js';
import { stored } from '../clickhouse/engines.js';
import { createRandom, generateBatches, type UploadEvent } from '../../reporting/dataset.js';
import { at, type FunnelQuestion, JUNE, MERGED_USERS, MODES, MONTH_EDGE, SAME_TIME_EVENTS, SEEDED_QUESTIONS, WIDE } from './funnel-cases.js';

let dataDir: string;
let engine: DuckDbEngine;
let segments = 0;
const DATASET = 1;
const DST_DATASET = 2;
const MINUTE = 60_000;

/** Loads the uploads as one journal segment. */
async function load(appId: number, uploads: UploadEvent[]): Promise<void> {
  const segment = join(dataDir, `segment-${++segments}.jsonl`);
  writeFileSync(segment, `${uploads.map((upload, i) => engine.journalLine(stored(upload, i, appId, Date.UTC(2026, 11, 1)))).join('\n')}\n`);
  await engine.loadSegment(segment, `segment-${segments}`);
}


/** A runner context on the engine's SQL only. */
const sqlContext = (appId: number, timeZone: string): RunnerContext => ({
  appId,
  timeZone,
  dialect: new DuckDbDialect({ userMappings: false }),
  query: (text: string) => engine.query(text),
  queryChunks: (text: string) => engine.queryChunks(text),
  now: () => 0,
});

/** The funnel through the timelines and through SQL: the same JSON, and the timelines did answer. */
async function sameAnswers(appId: number, timeZone: string, { start, end, steps, mode, cs }: FunnelQuestion) {
  await engine.timelinesBuilt();
  const query: FunnelQuery = { range: reportRange(timeZone, start, end), steps: steps.map((eventType) => ({ eventType, conditions: [] })), mode, windowSeconds: cs, segment: [], limit: 100 };
  const sql = sqlContext(appId, timeZone);
  let answered = false;
  const fromTimelines = await funnel(
    {
      ...sql,
      timelineFunnel: async (question) => {
        const groups = await engine.timelineFunnel(question);
        answered = groups !== undefined;
        return groups;
      },
    },
    query,
  );
  expect(answered).toBe(true);
  const fromSql = await funnel(sql, query);
  expect(JSON.stringify(fromTimelines)).toBe(JSON.stringify(fromSql));
  return fromTimelines;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-funnel-timelines-'));
  engine = await DuckDbEngine.open(dataDir);
  for (const batch of generateBatches({ users: 1500, batchSize: 20_000 })) await load(DATASET, batch);
  // Two weeks around the spring DST change in Los Angeles (2026-03-08).
  for (const batch of generateBatches({ users: 300, startMs: Date.UTC(2026, 2, 1), days: 14, batchSize: 20_000 })) await load(DST_DATASET, batch);
  await reopen();
}, 180_000);

/** The engine opened again: its projects' timelines built from the table (with their columns by type); projects loaded later are their loads'. */
async function reopen(): Promise<void> {
  await engine.close();
  engine = await DuckDbEngine.open(dataDir);
}
afterAll(async () => {
  await engine?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe.each(['UTC', 'America/Los_Angeles'])('the seeded dataset in %s', (timeZone) => {
  test.each(SEEDED_QUESTIONS)('%s', async (_, question) => {
    await sameAnswers(DATASET, timeZone, question);
  });
});

test.each(MODES)('%s funnels over the DST change in Los Angeles', async (mode) => {
  const answer = await sameAnswers(DST_DATASET, 'America/Los_Angeles', { start: '20260305', end: '20260312', steps: ['A', 'B'], mode, cs: 6 * 3600 });
  expect(answer.groups[0]!.total.reached[0]).toBeGreaterThan(0);
});

let nextApp = 100;

test.each(MODES)('%s: same-time events count in step order, identical ones as one moment', async (mode) => {
  const app = nextApp++;
  await load(app, SAME_TIME_EVENTS);
  await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'B'], mode, cs: 3600 });
  await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'A', 'B'], mode, cs: 3600 });
});

test('users merged after both had events: the merged timeline, in time order', async () => {
  const app = nextApp++;
  await load(app, MERGED_USERS.before);
  expect((await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'B', 'C'], mode: 'ordered', cs: 3600 })).groups[0]!.total.reached).toEqual([1, 0, 0]);
  await load(app, MERGED_USERS.identified);
  expect((await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'B', 'C'], mode: 'ordered', cs: 3600 })).groups[0]!.total.reached).toEqual([1, 1, 1]);
  await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'B', 'C'], mode: 'sequential', cs: 3600 });
});

test('a late event takes its place in the timeline', async () => {
  const app = nextApp++;
  await load(app, [{ event_type: 'B', user_id: 'u1', time: at(20) }]);
  await load(app, [{ event_type: 'A', user_id: 'u1', time: at(10) }]);
  expect((await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'B'], mode: 'sequential', cs: 3600 })).groups[0]!.total).toMatchObject({ reached: [1, 1], medianTimes: [10 * MINUTE, 10 * MINUTE] });
});

test('users of a built project changed after the build (late events, appends, merges, new users): read from their own timelines', async () => {
  const app = nextApp++;
  await load(app, [
    { event_type: 'A', user_id: 'u1', time: at(0) },
    { event_type: 'B', user_id: 'u1', time: at(20) },
    { event_type: 'A', user_id: 'u2', time: at(0) },
    { event_type: 'A', device_id: 'd1', time: at(5) },
    { event_type: 'C', device_id: 'd1', time: at(40) },
    { event_type: 'B', user_id: 'ada', device_id: 'd2', time: at(10) },
    ...['A', 'B', 'C'].map((event_type, i): UploadEvent => ({ event_type, user_id: 'u4', time: at(i) })),
  ]);
  await reopen();
  const questions = MODES.map((mode): FunnelQuestion => ({ ...JUNE, steps: ['A', 'B', 'C'], mode, cs: 3600 }));
  const uniquesOf = (eventType: string) => (ctx: RunnerContext) => segmentation(ctx, { range: reportRange('UTC', JUNE.start, JUNE.end), interval: 'day', events: [{ eventType, conditions: [] }], groupBy: [], segment: [], metric: 'uniques', activeUsersOnly: false, limit: 100 });
  const check = async () => {
    for (const question of questions) await sameAnswers(app, 'UTC', question);
    for (const eventType of ['A', 'B', 'C']) await sameCounts(app, 'UTC', uniquesOf(eventType));
  };
  expect((await sameAnswers(app, 'UTC', questions[0]!)).groups[0]!.total.reached).toEqual([4, 2, 1]);
  await load(app, [
    // Late: before u1's B.
    { event_type: 'B', user_id: 'u1', time: at(10) },
    { event_type: 'C', user_id: 'u1', time: at(30) },
    { event_type: 'B', user_id: 'u2', time: at(50) },
    // d1 is ada's: merged.
    { event_type: 'X', user_id: 'ada', device_id: 'd1', time: at(45) },
    { event_type: 'A', user_id: 'u3', time: at(1) },
    { event_type: 'C', user_id: 'u3', time: at(3) },
  ]);
  expect((await sameAnswers(app, 'UTC', questions[0]!)).groups[0]!.total.reached).toEqual([5, 4, 3]);
  await check();
  // A late event of a user whose runs by type a query just made.
  await load(app, [{ event_type: 'B', user_id: 'u3', time: at(2) }]);
  expect((await sameAnswers(app, 'UTC', questions[0]!)).groups[0]!.total.reached).toEqual([5, 5, 4]);
  await check();
});

test('a deletion scrub: the project is built again without the users, SQL answers meanwhile', async () => {
  const app = nextApp++;
  await load(app, [
    { event_type: 'A', user_id: 'ada', time: at(0) },
    { event_type: 'B', user_id: 'ada', time: at(5) },
    { event_type: 'A', user_id: 'bob', time: at(1) },
  ]);
  const question: FunnelQuestion = { ...JUNE, steps: ['A', 'B'], mode: 'ordered', cs: 3600 };
  expect((await sameAnswers(app, 'UTC', question)).groups[0]!.total.reached).toEqual([2, 1]);
  const ada = (await engine.svcIdsOfUsers(app, ['ada'])).get('ada')!;
  await engine.addDeletionEntries(app, '2026-06-20', [{ svcId: ada, requester: null, requestedOnDay: '2026-06-12' }]);
  await engine.scrubDeletionJob(app, '2026-06-20', '2026-06-20');
  expect(await engine.timelineFunnel({ appId: app, timeZone: 'UTC', range: reportRange('UTC', JUNE.start, JUNE.end), eventTypes: ['A', 'B'], mode: 'ordered', windowSeconds: 3600 })).toBeUndefined();
  expect((await sameAnswers(app, 'UTC', question)).groups[0]!.total.reached).toEqual([1, 0]);
});

test.each(MODES)('%s: later steps after the range end, within the window', async (mode) => {
  const app = nextApp++;
  await load(app, [
    { event_type: 'A', user_id: 'u1', time: Date.UTC(2026, 5, 12, 23, 50) },
    { event_type: 'B', user_id: 'u1', time: Date.UTC(2026, 5, 13, 0, 10) },
    { event_type: 'B', user_id: 'u2', time: Date.UTC(2026, 5, 13, 0, 10) },
    { event_type: 'A', user_id: 'u2', time: Date.UTC(2026, 5, 13, 0, 5) },
  ]);
  expect((await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'B'], mode, cs: 86_400 })).groups[0]!.total.reached).toEqual([1, 1]);
});

test.each(MODES)('%s: entry days on the DST days of Los Angeles', async (mode) => {
  const app = nextApp++;
  // 2026-03-08 02:00 → 03:00 (10:00 UTC) and 2026-11-01 02:00 → 01:00 (09:00 UTC).
  const around = (change: number) => [-70, -30, 30, 70].flatMap((minutes, i): UploadEvent[] => [
    { event_type: 'A', user_id: `u${i}`, time: change + minutes * MINUTE },
    { event_type: 'B', user_id: `u${i}`, time: change + (minutes + 5) * MINUTE },
  ]);
  await load(app, [...around(Date.UTC(2026, 2, 8, 10)), ...around(Date.UTC(2026, 10, 1, 9)), { event_type: 'A', user_id: 'late', time: Date.UTC(2026, 2, 9, 7, 30) }]);
  const spring = await sameAnswers(app, 'America/Los_Angeles', { start: '20260307', end: '20260309', steps: ['A', 'B'], mode, cs: 3600 });
  expect(spring.groups[0]!.byDay.map((day) => day.reached[0])).toEqual([0, 4, 1]);
  await sameAnswers(app, 'America/Los_Angeles', { start: '20261031', end: '20261102', steps: ['A', 'B'], mode, cs: 3600 });
});

/** A count through the timelines and through SQL: the same JSON, and the timelines did answer. */
async function sameCounts<T>(appId: number, timeZone: string, run: (ctx: RunnerContext) => Promise<T>): Promise<T> {
  await engine.timelinesBuilt();
  const sql = sqlContext(appId, timeZone);
  let answered = 0;
  const fromTimelines = await run({
    ...sql,
    timelineCounts: async (question) => {
      const counts = await engine.timelineCounts(question);
      if (counts) answered++;
      return counts;
    },
  });
  expect(answered).toBeGreaterThan(0);
  expect(JSON.stringify(fromTimelines)).toBe(JSON.stringify(await run(sql)));
  return fromTimelines;
}

const INTERVALS = ['day', 'week', 'month'] as const;
const counted: [string, { eventType: string; metric: SegmentationMetric; rollingAverage?: number }][] = [
  ['uniques of A', { eventType: 'A', metric: 'uniques' }],
  ['totals of ce:B', { eventType: 'ce:B', metric: 'totals' }],
  ['uniques of _active', { eventType: '_active', metric: 'uniques' }],
  ['totals of _all', { eventType: '_all', metric: 'totals' }],
  ['uniques of an unknown event type', { eventType: 'nothing', metric: 'uniques' }],
  ['average of A (totals / uniques)', { eventType: 'A', metric: 'average' }],
  ['pct_dau of C', { eventType: 'C', metric: 'pct_dau' }],
  ['uniques of A, rolling average of 3', { eventType: 'A', metric: 'uniques', rollingAverage: 3 }],
];

describe.each(['UTC', 'America/Los_Angeles'])('plain counts of the seeded dataset in %s', (timeZone) => {
  describe.each(INTERVALS)('by %s', (interval) => {
    test.each(counted)('segmentation: %s', async (_, { eventType, metric, rollingAverage }) => {
      const range = reportRange(timeZone, WIDE.start, WIDE.end);
      await sameCounts(DATASET, timeZone, (ctx) => segmentation(ctx, { range, interval, events: [{ eventType, conditions: [] }], groupBy: [], segment: [], metric, activeUsersOnly: false, rollingAverage, limit: 100 }));
    });
    test.each(['active', 'new'] as const)('%s users', async (metric) => {
      const answer = await sameCounts(DATASET, timeZone, (ctx) => userCounts(ctx, { range: reportRange(timeZone, MONTH_EDGE.start, MONTH_EDGE.end), metric, interval, segment: [] }));
      expect(answer.series[0]!.collapsed).toBeGreaterThan(0);
    });
  });
});

test('plain counts over the DST change in Los Angeles, and of users merged after both had events', async () => {
  const range = reportRange('America/Los_Angeles', '20260305', '20260312');
  await sameCounts(DST_DATASET, 'America/Los_Angeles', (ctx) => userCounts(ctx, { range, metric: 'active', interval: 'day', segment: [] }));
  const app = nextApp++;
  await load(app, [
    { event_type: 'A', device_id: 'd1', time: at(0) },
    { event_type: 'A', user_id: 'ada', device_id: 'd2', time: at(10) },
  ]);
  const uniques = (ctx: RunnerContext) => segmentation(ctx, { range: reportRange('UTC', JUNE.start, JUNE.end), interval: 'day', events: [{ eventType: 'A', conditions: [] }], groupBy: [], segment: [], metric: 'uniques', activeUsersOnly: false, limit: 100 });
  expect((await sameCounts(app, 'UTC', uniques)).series[0]!.collapsed).toBe(2);
  await load(app, MERGED_USERS.identified);
  expect((await sameCounts(app, 'UTC', uniques)).series[0]!.collapsed).toBe(1);
});

describe('TypeColumns and typeRuns', () => {
  /** Users 10: A B A, 20: B, 30: A, built. */
  const built = () => {
    const builder = new TimelineBuilder();
    const [a, b] = [builder.project.typeId('A'), builder.project.typeId('B')];
    builder.add(10, 100, a, 1);
    builder.add(10, 200, b, 2);
    builder.add(10, 300, a, 3);
    builder.add(20, 150, b, 4);
    builder.add(30, 50, a, 5);
    return { project: builder.finish(), a, b };
  };
  const column = (project: ProjectTimelines, type: number) => {
    const { users, starts, times, positions } = project.columns!.byType[type]!;
    return { users: Array.from(users), starts: Array.from(starts), times: Array.from(times), positions: Array.from(positions) };
  };
  const runs = (timeline: Timeline) => {
    const { types, ends, times, positions } = typeRuns(timeline);
    return { types: Array.from(types), ends: Array.from(ends), times: Array.from(times), positions: Array.from(positions) };
  };
  const loose = (project: ProjectTimelines) => [...project.looseTimelines()];

  test("a build's columns hold each type's events user after user, by the users' build order", () => {
    const { project, a, b } = built();
    expect(column(project, a)).toEqual({ users: [0, 2], starts: [0, 2, 3], times: [100, 300, 50], positions: [0, 2, 0] });
    expect(column(project, b)).toEqual({ users: [0, 1], starts: [0, 1, 2], times: [200, 150], positions: [1, 0] });
    expect(loose(project)).toEqual([]);
  });

  test('an append (late or not) takes the user out of the columns; its runs are made again after each change', () => {
    const { project, a, b } = built();
    project.append(10, 250, b, 6);
    expect(Array.from(project.columns!.stale)).toEqual([1, 0, 0]);
    const [timeline] = loose(project);
    expect(timeline).toBe(project.users.get(10));
    expect(runs(timeline!)).toEqual({ types: [a, b], ends: [2, 4], times: [100, 300, 200, 250], positions: [0, 3, 1, 2] });
    project.append(10, 50, b, 7);
    expect(runs(project.users.get(10)!)).toEqual({ types: [b, a], ends: [3, 5], times: [50, 200, 250, 100, 300], positions: [0, 2, 3, 1, 4] });
  });

  test('a merge into a user without events keeps the timeline in the columns; a merge of two users takes both out', () => {
    const { project } = built();
    project.merge(30, 40);
    expect(loose(project)).toEqual([]);
    project.merge(40, 20);
    expect(Array.from(project.columns!.stale)).toEqual([0, 1, 1]);
    expect(loose(project)).toEqual([project.users.get(20)]);
    project.merge(20, 50);
    expect(loose(project)).toEqual([project.users.get(50)]);
  });

  test("counts and funnels of a few types read the columns (not the built timelines' arrays), a changed user's own events", async () => {
    const { project, a, b } = built();
    const range = reportRange('UTC', '19700101', '19700101');
    const uniques = (eventType: string) => timelineCounts(project, { appId: 1, timeZone: 'UTC', range, interval: 'day', eventType, measure: 'uniques', firstEventsOnly: false }).whole;
    const entrants = async () => (await timelineFunnel(project, { appId: 1, timeZone: 'UTC', range, eventTypes: ['B', 'A'], mode: 'ordered', windowSeconds: 3600 }))[0]?.total.reached;
    expect([uniques('A'), uniques('B'), await entrants()]).toEqual([2, 2, [2, 1]]);
    // Behind the project's back: the columns still have user 30's A.
    project.users.get(30)!.types[0] = b;
    expect([uniques('A'), uniques('B'), await entrants()]).toEqual([2, 2, [2, 1]]);
    // Out of the columns: its own events.
    project.append(30, 60, a, 6);
    expect([uniques('A'), uniques('B'), await entrants()]).toEqual([2, 3, [3, 2]]);
  });

  test("a changed user without events of the funnel's types after one with: not an entrant", async () => {
    const { project, a } = built();
    const range = reportRange('UTC', '19700101', '19700101');
    project.append(10, 400, a, 6);
    project.append(40, 120, project.typeId('C'), 7);
    expect(loose(project).map((timeline) => timeline === project.users.get(40))).toEqual([false, true]);
    expect((await timelineFunnel(project, { appId: 1, timeZone: 'UTC', range, eventTypes: ['A', 'B'], mode: 'ordered', windowSeconds: 3600 }))[0]?.total.reached).toEqual([2, 1]);
  });
});

describe('a funnel thread', () => {
  const HOUR = 3_600_000;
  /** 3000 users' events of types A, B, C over ten days from 2026-03-03 (Los Angeles changes its clocks on the 8th); then 100 of them changed (stale in the columns) and 50 new. */
  const project = (() => {
    const random = createRandom(7);
    const builder = new TimelineBuilder();
    const types = ['A', 'B', 'C'].map((name) => builder.project.typeId(name));
    const start = Date.UTC(2026, 2, 3);
    const events = () => Array.from({ length: Math.floor(random() * 30) }, () => Math.floor(start + random() * 240 * HOUR)).sort((x, y) => x - y);
    let seq = 0;
    for (let svcId = 1; svcId <= 3000; svcId++) for (const time of events()) builder.add(svcId, time, types[Math.floor(random() * 3)]!, ++seq);
    const built = builder.finish();
    for (let svcId = 1; svcId <= 3150; svcId += 21) for (const time of events().slice(0, 4)) built.append(svcId, time, types[Math.floor(random() * 3)]!, ++seq);
    return built;
  })();
  const thread = new FunnelThread((message) => expect.unreachable(message), 0);
  afterAll(() => thread.close());

  test.each([
    ['ordered', 'UTC'],
    ['ordered', 'America/Los_Angeles'],
    ['unordered', 'America/Los_Angeles'],
  ] as const)('%s funnels in %s: the same answer with half the users tallied in the thread', async (mode, timeZone) => {
    const query = { appId: 1, timeZone, range: reportRange(timeZone, '20260304', '20260311'), eventTypes: ['A', 'B', 'C'], mode, windowSeconds: 6 * 3600 };
    const alone = await timelineFunnel(project, query);
    let tallied = 0;
    const counted = { tally: (share: ColumnsShare, users: number) => thread.tally(share, users)!.then((tally) => (tallied++, tally)) };
    expect(await timelineFunnel(project, query, counted)).toEqual(alone);
    expect(tallied).toBe(1);
    expect(alone[0]!.total.reached[0]).toBeGreaterThan(2000);
  });

  test('a thread that fails leaves its share to the engine: the same answer', async () => {
    const query = { appId: 1, timeZone: 'UTC', range: reportRange('UTC', '20260304', '20260311'), eventTypes: ['A', 'B'], mode: 'ordered' as const, windowSeconds: 3600 };
    const failing = { tally: () => Promise.reject(new Error('gone')) };
    expect(await timelineFunnel(project, query, failing)).toEqual(await timelineFunnel(project, query));
  });

  test('a share the thread fails is refused and logged', async () => {
    const logged: string[] = [];
    const failing = new FunnelThread((message) => logged.push(message), 0);
    try {
      await expect(failing.tally({} as ColumnsShare, 1)).rejects.toThrow(/^funnel thread: TypeError/);
      expect(logged).toEqual([expect.stringMatching(/^the funnel thread failed a share of a funnel's users, tallied by the engine's thread instead: funnel thread: TypeError: .*\n +at /s)]);
    } finally {
      await failing.close();
    }
  });

  test('funnels with fewer entering users than its threshold stay in one thread', () => {
    expect(new FunnelThread(() => undefined, 10).tally({} as ColumnsShare, 9)).toBeUndefined();
  });
});

describe('UserTimelines', () => {
  const events = (project: ProjectTimelines | undefined, svcId: number) => {
    const timeline = project!.users.get(svcId)!;
    return Array.from({ length: timeline.length }, (_, i) => [timeline.times[i], project!.typeNames[timeline.types[i]!], timeline.seqs[i]]);
  };

  test('appends keep (time, ingestion) order: a late event is inserted at its place, the arrays grow', () => {
    const timelines = new UserTimelines();
    for (let seq = 1; seq <= 6; seq++) timelines.append(1, 10, seq * 100, 'A', seq);
    timelines.append(1, 10, 250, 'late', 7);
    timelines.append(1, 10, 300, 'tie', 8);
    timelines.append(1, 10, 50, null, 9);
    expect(events(timelines.project(1), 10)).toEqual([
      [50, null, 9],
      [100, 'A', 1],
      [200, 'A', 2],
      [250, 'late', 7],
      [300, 'A', 3],
      [300, 'tie', 8],
      [400, 'A', 4],
      [500, 'A', 5],
      [600, 'A', 6],
    ]);
  });

  test('a build lays the users out one after the other; a later append moves the user to arrays of its own', () => {
    const builder = new TimelineBuilder();
    const [a, b] = [builder.project.typeId('A'), builder.project.typeId('B')];
    builder.add(10, 100, a, 1);
    builder.add(10, 200, b, 2);
    builder.add(20, 150, a, 3);
    const timelines = new UserTimelines();
    timelines.install(1, builder.finish());
    timelines.append(1, 10, 120, 'B', 4);
    expect(events(timelines.project(1), 10)).toEqual([
      [100, 'A', 1],
      [120, 'B', 4],
      [200, 'B', 2],
    ]);
    expect(events(timelines.project(1), 20)).toEqual([[150, 'A', 3]]);
  });

  test('a merge interleaves both timelines; merging into a user without events moves the timeline', () => {
    const timelines = new UserTimelines();
    timelines.append(1, 10, 100, 'A', 1);
    timelines.append(1, 10, 300, 'A', 3);
    timelines.append(1, 20, 200, 'B', 2);
    timelines.append(1, 20, 300, 'B', 4);
    timelines.append(2, 30, 100, 'C', 5);
    timelines.merge(20, 10);
    expect(events(timelines.project(1), 10)).toEqual([
      [100, 'A', 1],
      [200, 'B', 2],
      [300, 'A', 3],
      [300, 'B', 4],
    ]);
    expect(timelines.project(1)!.users.has(20)).toBe(false);
    timelines.merge(10, 40);
    expect(events(timelines.project(1), 40)).toHaveLength(4);
    timelines.forget(1);
    expect(timelines.project(1)).toBeUndefined();
    expect(events(timelines.project(2), 30)).toEqual([[100, 'C', 5]]);
  });
});
