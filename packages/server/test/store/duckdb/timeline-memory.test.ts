// --timeline-memory: the DuckDB engine's timelines (an in-memory index of every stored event)
// stay within their budget. A project whose timelines pass it, made by loads or by a build at
// open, is dropped, largest first, and answered by SQL from then on, with the same answers;
// a build stops adding events once its slabs pass it; 0 keeps none.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { reportRange } from '../../../src/model/time.js';
import type { FunnelQuery } from '../../../src/model/funnel-times.js';
import { funnel } from '../../../src/reporting/runners/funnels.js';
import type { RunnerContext } from '../../../src/reporting/runners/context.js';
import { DuckDbDialect } from '../../../src/store/duckdb/dialect.js';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { timelineBytes } from '../../../src/store/timelines/budget.js';
import { TimelineBuilder } from '../../../src/store/timelines/timelines.js';
import { bytesOfSize } from '../../../src/shared/sizes.js';
import { stored } from '../clickhouse/engines.js';
import { generateBatches, type UploadEvent } from '../../reporting/dataset.js';

const [SMALL, LARGE] = [1, 2];
const RANGE = { start: '20260121', end: '20260227' };
let dataDir: string;
let engine: DuckDbEngine;
let opened = false;
let logged: string[];
let segments = 0;

async function open(timelineMemoryBytes?: number): Promise<void> {
  engine = await DuckDbEngine.open(dataDir, (message) => logged.push(message), { timelineMemoryBytes });
  opened = true;
}

async function close(): Promise<void> {
  if (opened) await engine.close();
  opened = false;
}

async function load(appId: number, uploads: UploadEvent[]): Promise<void> {
  const segment = join(dataDir, `segment-${++segments}.jsonl`);
  writeFileSync(segment, `${uploads.map((upload, i) => engine.journalLine(stored(upload, i, appId, Date.UTC(2026, 11, 1)))).join('\n')}\n`);
  await engine.loadSegment(segment, `segment-${segments}`);
}

async function loadBoth(): Promise<void> {
  for (const batch of generateBatches({ users: 20, batchSize: 5_000 })) await load(SMALL, batch);
  for (const batch of generateBatches({ users: 400, batchSize: 20_000 })) await load(LARGE, batch);
}

const question = (appId: number) => ({ appId, timeZone: 'UTC', range: reportRange('UTC', RANGE.start, RANGE.end), eventTypes: ['A', 'B'], mode: 'ordered' as const, windowSeconds: 86_400 });

/** The A → B funnel through the engine's timelines when it answers, else SQL, and through SQL alone: the same answer. */
async function answers(appId: number): Promise<{ fromTimelines: boolean; answer: string }> {
  const sql: RunnerContext = { appId, timeZone: 'UTC', dialect: new DuckDbDialect({ userMappings: false }), query: (text) => engine.query(text), queryChunks: (text) => engine.queryChunks(text), now: () => 0 };
  const query: FunnelQuery = { range: reportRange('UTC', RANGE.start, RANGE.end), steps: ['A', 'B'].map((eventType) => ({ eventType, conditions: [] })), mode: 'ordered', windowSeconds: 86_400, segment: [], limit: 100 };
  let fromTimelines = false;
  const answer = JSON.stringify(
    await funnel(
      {
        ...sql,
        timelineFunnel: async (q) => {
          const groups = await engine.timelineFunnel(q);
          fromTimelines = groups !== undefined;
          return groups;
        },
      },
      query,
    ),
  );
  expect(answer).toBe(JSON.stringify(await funnel(sql, query)));
  return { fromTimelines, answer };
}

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-timeline-memory-'));
  logged = [];
});
afterEach(async () => {
  await close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('sizes read as DuckDB reads them', () => {
  expect(bytesOfSize('512MB')).toBe(512e6);
  expect(bytesOfSize(' 1.5 GiB ')).toBe(1.5 * 2 ** 30);
  expect(bytesOfSize('2gb')).toBe(2e9);
  expect(bytesOfSize('100B')).toBe(100);
  for (const bad of ['', '12', 'MB', '-1MB', '1 XB', '1e9B']) expect(bytesOfSize(bad)).toBeUndefined();
});

test("loads that take a project's timelines past the budget drop that project's, not the smaller one's; both answer the same", async () => {
  await open();
  await loadBoth();
  const [small, large] = [(await answers(SMALL)).answer, (await answers(LARGE)).answer];
  expect((await answers(LARGE)).fromTimelines).toBe(true);
  await close();
  // A budget between the two projects' sizes, as their loads make them (no build: the projects are new).
  rmSync(dataDir, { recursive: true, force: true });
  dataDir = mkdtempSync(join(tmpdir(), 'svc-timeline-memory-'));
  await open(100_000);
  await loadBoth();
  expect(await answers(SMALL)).toEqual({ fromTimelines: true, answer: small });
  expect(await answers(LARGE)).toEqual({ fromTimelines: false, answer: large });
  expect(logged.filter((line) => line.includes(`project ${LARGE}`) && line.includes('--timeline-memory'))).toHaveLength(1);
  expect(logged.some((line) => line.includes(`project ${SMALL}`))).toBe(false);
  // Later loads of the dropped project do not bring its timelines back.
  for (const batch of generateBatches({ users: 10, batchSize: 1_000, startMs: Date.UTC(2026, 0, 25) })) await load(LARGE, batch);
  expect((await engine.timelineFunnel(question(LARGE))) === undefined).toBe(true);
}, 120_000);

test('a build at open that passes the budget drops the largest project, answered by SQL; 0 keeps no timelines at all', async () => {
  await open();
  await loadBoth();
  await close();
  // The small project's build holds about 17 kB, the large one's about 350 kB.
  await open(30_000);
  await engine.timelinesBuilt();
  expect((await answers(SMALL)).fromTimelines).toBe(true);
  expect((await answers(LARGE)).fromTimelines).toBe(false);
  expect(logged.filter((line) => line.includes('--timeline-memory'))).toEqual([expect.stringContaining(`project ${LARGE}`)]);
  await close();
  logged = [];
  await open(0);
  await engine.timelinesBuilt();
  expect((await answers(LARGE)).fromTimelines).toBe(false);
  expect(logged).toEqual([]);
}, 120_000);

test('a build stops adding events once its slabs pass the budget; within it, the bytes counted are its slabs and columns', () => {
  const users = 1_000;
  const build = (budgetBytes: number, events: number) => {
    const builder = new TimelineBuilder(budgetBytes);
    const types = ['A', 'B', 'C'].map((name) => builder.project.typeId(name));
    for (let i = 0; i < events; i++) builder.add(Math.floor((i * users) / events), i, types[i % 3]!, i);
    return builder;
  };
  const small = build(30e6, 1_000);
  expect(small.exceeded).toBe(false);
  const project = small.finish();
  // Its slab cut to its events (20 bytes each) and the columns (12 bytes per event, 8 per user of each type, 4 per type).
  expect(timelineBytes(project)).toBe(1_000 * 20 + 1_000 * 12 + 1_000 * 8 + 3 * 4);
  const large = build(30e6, 1.2 * 2 ** 20);
  expect(large.exceeded).toBe(true);
  expect(build(100e6, 1.2 * 2 ** 20).exceeded).toBe(false);
});
