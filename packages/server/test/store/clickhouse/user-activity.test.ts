// Active and new users on ClickHouse from the activity kept at load equal DuckDB's answers by
// SQL over the events, per day, week and month: first from `user_days` (user-activity.ts) in
// zones of whole-hour offsets (daylight saving included), while the local days of each zone
// asked in are built (local-days.ts); then from those, in every zone (a half-hour one too). They
// stay equal after anonymous users merge into users known from an earlier segment, after that
// segment's load is cut short, removed and loaded again, and after a deletion job.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { reportRange } from '../../../src/model/time.js';
import type { RunnerContext } from '../../../src/reporting/runners/context.js';
import { userCounts } from '../../../src/reporting/runners/users.js';
import { ClickHouseDialect } from '../../../src/store/clickhouse/dialect.js';
import { DuckDbDialect } from '../../../src/store/duckdb/dialect.js';
import { generateEvents } from '../../reporting/dataset.js';
import { EnginePair, stored } from './engines.js';

const APP = 5;
const START = Date.UTC(2026, 1, 20);
const DAY = 86_400_000;
const DATABASE = 'activity';
// New York changes to summer time on Mar 8; London on Mar 29, when the UTC day holds the starts
// of two local days; Kolkata is 5:30 ahead of UTC, its days are not kept in `user_days`.
const KEPT_ZONES = ['UTC', 'America/New_York', 'Europe/London', 'Asia/Tokyo'];
const HALF_HOUR_ZONE = 'Asia/Kolkata';

let pair: EnginePair;

const events = generateEvents({ users: 300, startMs: START, days: 40 }).map((upload, i) => stored(upload, i, APP, START + 50 * DAY));
const SEGMENTS = [
  // Anonymous events first: the next segment's identifications merge users the first one holds.
  events.filter((e) => e.user_id === undefined || e.user_id === null),
  events.filter((e) => e.user_id !== undefined && e.user_id !== null),
];

async function loadBoth(index: number): Promise<string> {
  const name = `segment-${index + 1}`;
  const path = join(pair.dir, `${name}.jsonl`);
  writeFileSync(path, `${SEGMENTS[index]!.map((event) => pair.duck.journalLine(event)).join('\n')}\n`);
  for (const engine of [pair.duck, pair.ch]) await engine.loadSegment(path, name);
  return path;
}

/** The active and new users of both engines: DuckDB's SQL over its events, ClickHouse's kept activity (and whether it answered). */
async function bothAnswers(timeZone: string, metric: 'active' | 'new', interval: 'day' | 'week' | 'month') {
  const common = { appId: APP, timeZone, now: () => START + 60 * DAY };
  const reference: RunnerContext = { ...common, dialect: new DuckDbDialect({ userMappings: false }), query: (sql) => pair.duck.query(sql), queryChunks: (sql) => pair.duck.queryChunks(sql) };
  let kept = false;
  const onClickHouse: RunnerContext = {
    ...common,
    dialect: new ClickHouseDialect({ userMappings: false }),
    query: (sql) => pair.ch.query(sql),
    queryChunks: (sql) => pair.ch.queryChunks(sql),
    timelineCounts: async (query) => {
      const answer = await pair.ch.timelineCounts(query);
      kept = answer !== undefined;
      return answer;
    },
  };
  const query = { range: reportRange(timeZone, '20260220', '20260331'), metric, interval, segment: [] };
  return { expected: await userCounts(reference, query), actual: await userCounts(onClickHouse, query), kept };
}

/** Users with any event per bucket, as the engines' timelineCounts answer them (ClickHouse's from the local days once built). */
async function anyEventUsers(timeZone: string, interval: 'day' | 'week' | 'month') {
  const query = { appId: APP, timeZone, range: reportRange(timeZone, '20260220', '20260331'), interval, eventType: '_all', measure: 'uniques' as const, firstEventsOnly: false };
  await pair.duck.timelinesBuilt();
  return { expected: await pair.duck.timelineCounts(query), actual: await pair.ch.timelineCounts(query) };
}

async function expectAgreement(): Promise<void> {
  for (const timeZone of KEPT_ZONES) {
    for (const metric of ['active', 'new'] as const) {
      for (const interval of ['day', 'week', 'month'] as const) {
        const { expected, actual, kept } = await bothAnswers(timeZone, metric, interval);
        expect(kept, `${metric} per ${interval} in ${timeZone} from the kept activity`).toBe(true);
        expect(actual, `${metric} per ${interval} in ${timeZone}`).toEqual(expected);
        expect(expected.series[0]!.collapsed, 'users counted').toBeGreaterThan(0);
      }
    }
  }
}

/** Builds the local days of the zones asked in, then takes `user_days` away: answers of active users come from the local days alone. */
async function onlyLocalDaysAfterBuilds(zones: readonly string[]): Promise<void> {
  await pair.ch.timelinesBuilt();
  const built = await pair.ch.query(`SELECT zone FROM local_day_zones WHERE app_id = ${APP} ORDER BY zone`);
  expect(built.map((row) => row.zone)).toEqual([...zones].sort());
  await pair.command(`ALTER TABLE user_days DELETE WHERE app_id = ${APP}`);
  await pair.waitForMutations();
}

beforeAll(async () => {
  pair = await EnginePair.open(DATABASE);
}, 60_000);

afterAll(() => pair?.close());

describe('active and new users from the activity kept at load', () => {
  test('equal the SQL over the events, before and after merges into users of an earlier segment', async () => {
    await loadBoth(0);
    await expectAgreement();
    await onlyLocalDaysAfterBuilds(KEPT_ZONES);
    await expectAgreement();
    for (const interval of ['day', 'week', 'month'] as const) {
      const { expected, actual } = await anyEventUsers('America/New_York', interval);
      expect(expected?.whole, 'DuckDB counts users with any event').toBeGreaterThan(0);
      expect(actual, `users with any event per ${interval}`).toEqual(expected);
    }
    await loadBoth(1);
    const merges = await pair.ch.query('SELECT count() AS n FROM svc_merges');
    expect(Number(merges[0]!.n), 'anonymous users merged').toBeGreaterThan(10);
    await expectAgreement();
  }, 300_000);

  test('a load cut short after it merged users of an earlier load is removed at the next open and loaded again: each user counts once', async () => {
    const path = join(pair.dir, 'segment-2.jsonl');
    // A crash after the merges and the events were written, before the load was recorded: the
    // load run again gives the users it made new svc_ids.
    await pair.command(`ALTER TABLE loaded_segments DELETE WHERE name IN ('segment-2', 'segment-2#${APP}')`);
    await pair.waitForMutations();
    await pair.reopen();
    await pair.ch.loadSegment(path, 'segment-2');
    await expectAgreement();
  }, 300_000);

  test('a zone whose days start on the half hour is answered by the SQL, then from its local days', async () => {
    const first = await bothAnswers(HALF_HOUR_ZONE, 'active', 'day');
    expect(first.kept).toBe(false);
    expect(first.actual).toEqual(first.expected);
    await pair.ch.timelinesBuilt();
    for (const interval of ['day', 'week', 'month'] as const) {
      const { expected, actual, kept } = await bothAnswers(HALF_HOUR_ZONE, 'active', interval);
      expect(kept, `active users per ${interval}`).toBe(true);
      expect(actual, `active users per ${interval}`).toEqual(expected);
    }
  }, 60_000);

  test('a deletion job takes the users out', async () => {
    const userIds = ['user-3', 'user-4', 'user-5'];
    for (const engine of [pair.duck, pair.ch]) {
      const svcIds = await engine.svcIdsOfUsers(APP, userIds);
      await engine.addDeletionEntries(APP, '2026-04-02', [...svcIds.values()].map((svcId) => ({ svcId, requester: 'admin', requestedOnDay: '2026-03-31' })));
      await engine.scrubDeletionJob(APP, '2026-04-02', '2026-04-02');
    }
    await expectAgreement();
  }, 300_000);
});
