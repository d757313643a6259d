// Plain funnels on ClickHouse from each user's events read for the question (user-timelines.ts)
// answer as DuckDB's SQL does: the seeded dataset's funnels in every mode and two time zones,
// read whole, a few hundred rows per share of the users, and with users numbered by a Map
// (ids too sparse for an array); same-time events; users merged after both had events.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FunnelQuery } from '../../../src/model/funnel-times.js';
import { reportRange } from '../../../src/model/time.js';
import type { RunnerContext } from '../../../src/reporting/runners/context.js';
import { funnel } from '../../../src/reporting/runners/funnels.js';
import { ClickHouseDialect } from '../../../src/store/clickhouse/dialect.js';
import { ClickHouseEvents } from '../../../src/store/clickhouse/events.js';
import type { StreamedFunnelLimits } from '../../../src/store/clickhouse/user-timelines.js';
import { streamedFunnel } from '../../../src/store/clickhouse/user-timelines.js';
import { DuckDbDialect } from '../../../src/store/duckdb/dialect.js';
import { generateBatches, type UploadEvent } from '../../reporting/dataset.js';
import { type FunnelQuestion, JUNE, MERGED_USERS, MODES, SAME_TIME_EVENTS, SEEDED_QUESTIONS } from '../timelines/funnel-cases.js';
import { EnginePair, stored } from './engines.js';

const DATASET = 1;
let pair: EnginePair;
/** The engine's database, read as the engine reads it. */
let events: ClickHouseEvents;
let segments = 0;

/** Both engines load the uploads as one journal segment. */
async function load(appId: number, uploads: UploadEvent[]): Promise<void> {
  const name = `segment-${++segments}`;
  const path = join(pair.dir, `${name}.jsonl`);
  writeFileSync(path, `${uploads.map((upload, i) => pair.duck.journalLine(stored(upload, i, appId, Date.UTC(2026, 11, 1)))).join('\n')}\n`);
  for (const engine of [pair.duck, pair.ch]) await engine.loadSegment(path, name);
}


/** Ways of reading: whole, a few hundred rows per share, users numbered by a Map. */
const READS: [string, StreamedFunnelLimits | undefined][] = [
  ['read whole', undefined],
  ['in shares of 400 rows', { rowsPerShare: 400, placesPerRow: 4 }],
  ['users numbered by a Map', { rowsPerShare: 4_000_000, placesPerRow: 0 }],
];

/** The funnel from ClickHouse's streamed users (each way of reading) equals DuckDB's SQL answer. */
async function sameAnswers(appId: number, timeZone: string, { start, end, steps, mode, cs }: FunnelQuestion) {
  const query: FunnelQuery = { range: reportRange(timeZone, start, end), steps: steps.map((eventType) => ({ eventType, conditions: [] })), mode, windowSeconds: cs, segment: [], limit: 100 };
  const common = { appId, timeZone, now: () => 0 };
  const reference: RunnerContext = { ...common, dialect: new DuckDbDialect({ userMappings: false }), query: (sql) => pair.duck.query(sql), queryChunks: (sql) => pair.duck.queryChunks(sql) };
  const expected = await funnel(reference, query);
  for (const [read, limits] of READS) {
    let streamed = false;
    const onClickHouse: RunnerContext = {
      ...common,
      dialect: new ClickHouseDialect({ userMappings: false }),
      query: (sql) => pair.ch.query(sql),
      queryChunks: (sql) => pair.ch.queryChunks(sql),
      timelineFunnel: async (question) => {
        streamed = true;
        return streamedFunnel(events, question, limits);
      },
    };
    expect(JSON.stringify(await funnel(onClickHouse, query)), read).toBe(JSON.stringify(expected));
    expect(streamed, `${read}: answered from the users' events`).toBe(true);
  }
  return expected;
}

beforeAll(async () => {
  pair = await EnginePair.open('user_timelines');
  events = await ClickHouseEvents.open({ url: pair.clickhouse.url, database: pair.database });
  for (const batch of generateBatches({ users: 400, batchSize: 20_000 })) await load(DATASET, batch);
}, 120_000);

afterAll(async () => {
  await events?.close();
  await pair?.close();
});

describe.each(['UTC', 'America/Los_Angeles'])('the seeded dataset in %s', (timeZone) => {
  test.each(SEEDED_QUESTIONS)('%s', async (_, question) => {
    const answer = await sameAnswers(DATASET, timeZone, question);
    if (!question.steps.includes('nothing')) expect(answer.groups[0]!.total.reached[1]).toBeGreaterThan(0);
  });
});

test.each(MODES)('%s: same-time events count in step order, identical ones as one moment', async (mode) => {
  const app = 100 + MODES.indexOf(mode);
  await load(app, SAME_TIME_EVENTS);
  expect((await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'B'], mode, cs: 3600 })).groups[0]!.total.reached).toEqual([2, 2]);
  await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'A', 'B'], mode, cs: 3600 });
});

test('users merged after both had events: the merged user, in time order', async () => {
  const app = 200;
  await load(app, MERGED_USERS.before);
  expect((await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'B', 'C'], mode: 'ordered', cs: 3600 })).groups[0]!.total.reached).toEqual([1, 0, 0]);
  await load(app, MERGED_USERS.identified);
  await pair.waitForMutations();
  expect((await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'B', 'C'], mode: 'ordered', cs: 3600 })).groups[0]!.total.reached).toEqual([1, 1, 1]);
  await sameAnswers(app, 'UTC', { ...JUNE, steps: ['A', 'B', 'C'], mode: 'sequential', cs: 3600 });
});
