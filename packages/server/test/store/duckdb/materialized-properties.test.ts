// The DuckDB engine's materialized event properties: a query that groups by or filters on an
// event property notes it, the engine fills a column with its text in the background, and from
// then on the dialect reads the column. The answers are the same as from the JSON for every
// kind of value and property name; events loaded after, a deletion scrub, a restart and a fill
// a crash interrupted keep them so. A fill that fails is logged and tried again.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { duckDbDialectOf } from '../../../src/reporting/handlers.js';
import { DuckDbDialect, eventPropertyText } from '../../../src/store/duckdb/dialect.js';
import type { Condition } from '../../../src/model/query.js';
import type { RunnerContext } from '../../../src/reporting/runners/context.js';
import { funnel } from '../../../src/reporting/runners/funnels.js';
import { segmentation, type SegmentationQuery } from '../../../src/reporting/runners/segmentation.js';
import { reportRange } from '../../../src/model/time.js';
import { startServer } from '../../../src/server.js';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { stored } from '../clickhouse/engines.js';
import type { UploadEvent } from '../../reporting/dataset.js';

const APP = 3;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 9, 1);
const RANGE = reportRange('UTC', '20261001', '20261010');
const DAILY: Pick<SegmentationQuery, 'range' | 'interval' | 'segment' | 'activeUsersOnly' | 'limit'> = { range: RANGE, interval: 'day', segment: [], activeUsersOnly: false, limit: 100 };
/** Events of type Play per day and value of the property. */
const playsBy = (name: string): SegmentationQuery => ({ ...DAILY, events: [{ eventType: 'Play', conditions: [] }], groupBy: [{ kind: 'event', name }], metric: 'totals' });

/** Names that are not identifiers, nor plain JSON pointers. */
const PROPERTIES = ['kind', "it's", 'a.b', 'a/b', '"quoted"', 'tilde~1', 'with space', 'ünï'];
/** Every kind of JSON value, and a missing key (undefined). */
const VALUES: unknown[] = ['rock', 'Rock', '', 'it\'s "x"', 42, 1.5, -0, 1e21, true, false, null, { a: 1, b: [2] }, [1, 'x'], ['rock', 'pop'], [], {}, undefined];

let dataDir: string;
let engine: DuckDbEngine;
let segments = 0;

async function load(uploads: UploadEvent[]): Promise<void> {
  const segment = join(dataDir, `segment-${++segments}.jsonl`);
  writeFileSync(segment, `${uploads.map((upload, i) => engine.journalLine(stored(upload, i, APP, T0 + 20 * DAY))).join('\n')}\n`);
  await engine.loadSegment(segment, `segment-${segments}`);
}

/** Events of a few users whose properties take every value in turn (`shift` starts them elsewhere). */
function events(count: number, shift: number): UploadEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const properties = Object.fromEntries(PROPERTIES.flatMap((name, p) => {
      const value = VALUES[(i + p + shift) % VALUES.length];
      return value === undefined ? [] : [[name, value]];
    }));
    return { event_type: i % 3 === 0 ? 'Play' : 'Buy', user_id: `u${(i + shift) % 7}`, time: T0 + ((i * 7_919_000) % (9 * DAY)), event_properties: properties };
  });
}

const CONDITIONS: Omit<Condition, 'property'>[] = [
  { op: 'is', values: ['rock', '42', 'true', '(none)'] },
  { op: 'is not', values: ['rock', '1.5'] },
  { op: 'contains', values: ['ock', '"'] },
  { op: 'does not contain', values: ['o'] },
  { op: 'greater', values: ['1'] },
  { op: 'less or equal', values: ['0'] },
  { op: 'set is', values: ['rock'] },
  { op: 'set is not', values: ['x'] },
];

/** The SQL a context printed. */
let printed: string[] = [];

/** A runner context whose dialect is the reporting handlers' (materialized columns when ready), or one reading the JSON only. */
async function context(fromJson = false): Promise<RunnerContext> {
  return {
    appId: APP,
    timeZone: 'UTC',
    dialect: fromJson ? new DuckDbDialect({ userMappings: false }) : await duckDbDialectOf(engine)(APP),
    query: (sql) => {
      printed.push(sql);
      return engine.query(sql);
    },
    queryChunks: (sql) => {
      printed.push(sql);
      return engine.queryChunks(sql);
    },
    now: () => 0,
  };
}

/** Segmentations grouped by each property and filtered on it, and a funnel grouped by one: their answers as JSON. */
async function answers(ctx: RunnerContext): Promise<string> {
  const results: unknown[] = [];
  for (const name of PROPERTIES) {
    const property = { kind: 'event', name } as const;
    results.push(await segmentation(ctx, playsBy(name)));
    results.push(await segmentation(ctx, { ...DAILY, events: [{ eventType: '_all', conditions: [] }], groupBy: [property], metric: 'uniques' }));
    for (const condition of CONDITIONS) {
      results.push(await segmentation(ctx, { ...DAILY, events: [{ eventType: '_all', conditions: [{ property, ...condition }] }], groupBy: [], metric: 'totals' }));
    }
  }
  const steps = [{ eventType: 'Play', conditions: [] }, { eventType: 'Buy', conditions: [] }];
  results.push(await funnel(ctx, { range: RANGE, steps, mode: 'ordered', windowSeconds: 86_400, segment: [], groupBy: { kind: 'event', name: "it's" }, limit: 100 }));
  return JSON.stringify(results);
}

/** The answers through the materialized columns equal those from the JSON, and every property was read from its column. */
async function expectSameAnswersFromColumns(): Promise<void> {
  const fromJson = await answers(await context(true));
  printed = [];
  expect(await answers(await context())).toBe(fromJson);
  const sql = printed.join('\n');
  expect(sql).not.toContain('json_extract_string(e.event_properties');
  expect(sql.match(/e\."mp_\d+"/g)?.length).toBeGreaterThan(PROPERTIES.length);
}

/** Rows whose column does not hold exactly the text the dialect reads from the JSON. */
async function wrongValues(): Promise<number> {
  const [options] = await engine.query(DuckDbDialect.optionsQuery(APP));
  const columns = options!.columns as { name: string; column_name: string }[];
  expect(columns.map((c) => c.name).sort()).toEqual([...PROPERTIES].sort());
  const mismatches = columns.map((c) => `count(*) FILTER (WHERE "${c.column_name}" IS DISTINCT FROM ${eventPropertyText('event_properties', c.name)})`);
  const [row] = await engine.query(`SELECT ${mismatches.join(' + ')} AS wrong FROM events`);
  return row!.wrong as number;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-materialized-'));
  engine = await DuckDbEngine.open(dataDir);
  await load(events(400, 0));
});

afterAll(async () => {
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('a query notes the event properties it reads from the JSON; once filled, the answers from their columns are the same', async () => {
  printed = [];
  const fromJson = await answers(await context());
  expect(printed.join('\n')).toContain('json_extract_string(e.event_properties');
  await engine.propertiesMaterialized();
  expect(await wrongValues()).toBe(0);
  expect(await answers(await context())).toBe(fromJson);
  await expectSameAnswersFromColumns();
  // The columns are the engine's: events read back are as they were loaded.
  expect(Object.keys((await engine.events(APP))[0]!).filter((key) => key.startsWith('mp_'))).toEqual([]);
  expect(Object.keys((await engine.eventsBySeq([1]))[0]!).filter((key) => key.startsWith('mp_'))).toEqual([]);
});

test('events loaded after the materialization get their values at insert', async () => {
  await load(events(300, 5));
  expect(await wrongValues()).toBe(0);
  await expectSameAnswersFromColumns();
});

test('a deletion scrub keeps the answers right', async () => {
  const svcId = (await engine.svcIdsOfUsers(APP, ['u3'])).get('u3')!;
  await engine.addDeletionEntries(APP, '2026-10-20', [{ svcId, requester: null, requestedOnDay: '2026-10-12' }]);
  await engine.scrubDeletionJob(APP, '2026-10-20', '2026-10-20');
  expect((await engine.events(APP)).some((e) => e.user_id === 'u3')).toBe(false);
  expect(await wrongValues()).toBe(0);
  await expectSameAnswersFromColumns();
});

test('a restart keeps the columns ready and filled by loads', async () => {
  await engine.close();
  engine = await DuckDbEngine.open(dataDir);
  await load(events(100, 11));
  expect(await wrongValues()).toBe(0);
  await expectSameAnswersFromColumns();
});

test('a column whose fill a crash interrupted is not read until filled again', async () => {
  // What a crash midway leaves: the column added, part of it filled, not marked ready.
  await engine.sql.run("UPDATE materialized_properties SET ready = false WHERE name = 'kind'");
  const [kind] = await engine.query("SELECT column_name FROM materialized_properties WHERE name = 'kind'");
  await engine.sql.run(`UPDATE events SET "${kind!.column_name as string}" = NULL WHERE ingest_seq > 200`);
  await engine.close();
  engine = await DuckDbEngine.open(dataDir);
  const readable = async () => ((await engine.query(DuckDbDialect.optionsQuery(APP)))[0]!.columns as { name: string }[]).map((c) => c.name);
  if ((await readable()).includes('kind')) {
    // Filled again meanwhile: it must be right.
    expect(await wrongValues()).toBe(0);
  } else {
    printed = [];
    await segmentation(await context(), playsBy('kind'));
    // The query reads the JSON, unless the refill made the column ready between the two looks.
    if (!printed.join('\n').includes("json_extract_string(e.event_properties, '/kind')")) expect(await readable()).toContain('kind');
  }
  await engine.propertiesMaterialized();
  expect(await wrongValues()).toBe(0);
  await expectSameAnswersFromColumns();
});

test('the properties a server is started with are materialized from the start', async () => {
  const serverDir = mkdtempSync(join(tmpdir(), 'svc-materialized-server-'));
  const server = await startServer({ dataDir: serverDir, host: '127.0.0.1', port: 0, logger: false, engineIn: 'main', materializedProperties: ['a/b'] });
  try {
    const materialized = async () => ((await server.store.query(DuckDbDialect.optionsQuery(APP)))[0]!.columns as { name: string }[]).map((c) => c.name);
    const deadline = Date.now() + 10_000;
    while ((await materialized()).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await materialized()).toEqual(['a/b']);
  } finally {
    await server.close();
    rmSync(serverDir, { recursive: true, force: true });
  }
});

test('at most 64 properties are materialized (property names are user data)', async () => {
  const many = await DuckDbEngine.open(mkdtempSync(join(dataDir, 'many-')));
  await many.materializeEventProperties(Array.from({ length: 70 }, (_, i) => `p${i}`));
  await many.propertiesMaterialized();
  expect(await many.query('SELECT count(*) AS n FROM materialized_properties')).toEqual([{ n: 64 }]);
  await many.close();
});

test('a fill that fails is logged and tried again a second later, without a query asking again', async () => {
  const logged: string[] = [];
  const failing = await DuckDbEngine.open(mkdtempSync(join(dataDir, 'failing-')), (message) => logged.push(message));
  try {
    // The column its first property gets is taken: the fill fails.
    await failing.sql.run('ALTER TABLE events ADD COLUMN mp_1 VARCHAR');
    await failing.materializeEventProperties(['genre']);
    await vi.waitFor(() => expect(logged).toHaveLength(1));
    expect(logged[0]).toMatch(/^materializing the event property "genre" failed, tried again in 1 s; queries read it from the events' properties meanwhile, slower: .*mp_1/s);
    await failing.sql.run('ALTER TABLE events DROP COLUMN mp_1');
    await vi.waitFor(async () => expect(await failing.query('SELECT name, ready FROM materialized_properties')).toEqual([{ name: 'genre', ready: true }]), { timeout: 5_000, interval: 100 });
    expect(logged).toHaveLength(1);
  } finally {
    await failing.close();
  }
});
