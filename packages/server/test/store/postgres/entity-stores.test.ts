// The entity stores (and the entities both engines keep: deletion jobs, user mappings,
// feedback) run the same operations on DuckDB (the engine's session) and on
// PostgreSQL 15 (Debian's, started on loopback) and must answer alike. Each side has its
// own DuckDB engine with the same events for what the stores read from the engine
// (cohort members, profiles, events to stream).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type PostgresServer, startPostgres } from '../../../../../scripts/postgres/start.mjs';
import { AnnotationStore } from '../../../src/annotations/store.js';
import { CohortStore } from '../../../src/cohorts/store.js';
import { StreamStore } from '../../../src/delivery-metrics/store.js';
import { ReplayStore } from '../../../src/session-replays/store.js';
import { TaxonomyStore } from '../../../src/taxonomy/store.js';
import { type EventTypeEntry, newEntry } from '../../../src/taxonomy/event-types.js';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { SharedEntities } from '../../../src/store/shared-entities.js';
import { postgresSession, type PostgresSession } from '../../../src/store/postgres/sql-session.js';
import type { SqlSession, StoredEvent, StreamedEvents } from '../../../src/store/types.js';
import { stored } from '../clickhouse/engines.js';

interface Side {
  sql: SqlSession;
  engine: DuckDbEngine;
}

const APP = 7;
const T0 = Date.UTC(2026, 10, 1);

const EVENTS: StoredEvent[] = [
  { event_type: '$identify', user_id: 'ada', device_id: 'd1', time: T0, user_properties: { $set: { plan: 'pro', seats: 3 } } },
  { event_type: 'open', user_id: 'ada', device_id: 'd1', time: T0 + 1000, country: 'FR', platform: 'iOS' },
  { event_type: 'buy', user_id: 'bob', device_id: 'd2', time: T0 + 2000, country: 'DE' },
  { event_type: 'open', user_id: 'bob', device_id: 'd2', time: T0 + 3000, country: 'AT', app_version: '2.1' },
  { event_type: 'buy', user_id: 'cy', device_id: 'd3', time: T0 + 4000 },
  { event_type: 'open', user_id: 'cy', device_id: 'd3', time: T0 + 5000, language: 'fr' },
].map((event, i) => stored(event, i, APP, T0 + 10_000));

let postgres: PostgresServer;
let pgSession: PostgresSession;
const dirs: string[] = [];
const sides: Side[] = [];

async function engineWithEvents(): Promise<DuckDbEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-entities-'));
  dirs.push(dir);
  const engine = await DuckDbEngine.open(dir);
  const segment = join(dir, 'segment-1.jsonl');
  writeFileSync(segment, `${EVENTS.map((event) => engine.journalLine(event)).join('\n')}\n`);
  await engine.loadSegment(segment, 'segment-1');
  return engine;
}

beforeAll(async () => {
  postgres = await startPostgres();
  pgSession = postgresSession(postgres.url);
  const duck = await engineWithEvents();
  sides.push({ sql: duck.sql, engine: duck }, { sql: pgSession, engine: await engineWithEvents() });
});

afterAll(async () => {
  await pgSession?.close();
  for (const { engine } of sides) await engine.close();
  await postgres?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** What `scenario` records on each side: DuckDB's first, PostgreSQL's second. */
async function onBothSides(scenario: (side: Side, record: (...values: unknown[]) => void) => Promise<void>): Promise<unknown[][]> {
  const transcripts: unknown[][] = [];
  for (const side of sides) {
    const transcript: unknown[] = [];
    await scenario(side, (...values) => transcript.push(...values));
    transcripts.push(transcript);
  }
  return transcripts;
}

test('annotations and their categories', async () => {
  const [duck, pg] = await onBothSides(async ({ sql }, record) => {
    const store = new AnnotationStore(sql);
    const launch = (await store.saveCategory(APP, 'Launch'))!;
    const outage = (await store.saveCategory(APP, 'Outage'))!;
    record([launch, outage, await store.saveCategory(APP, 'Launch'), await store.saveCategory(APP, 'Releases', launch.id)]);
    record(await store.categories(APP));
    record(await store.categories(APP, 'Outage'));
    const first = await store.createAnnotation(APP, { label: 'v1', start: '2026-11-01T10:00Z', categoryId: launch.id });
    const second = await store.createAnnotation(APP, { label: 'down', start: '2026-11-02T10:00+02:00', end: '2026-11-02T12:00Z', details: 'db', chart_id: 'c1' });
    const third = await store.createAnnotation(APP, { label: 'v2', start: '2026-10-30T00:00Z' });
    record([first, second, third]);
    await store.updateAnnotation(APP, third.id, { end: '2026-10-31T00:00Z', details: 'late', categoryId: outage.id });
    record(await store.annotations(APP, {}));
    record(await store.annotations(APP, { afterMs: Date.parse('2026-11-01T00:00Z'), beforeMs: Date.parse('2026-11-02T11:00Z') }));
    record(await store.annotations(APP, { chartId: 'c1' }));
    record([await store.assignCategory(APP, outage.id, [first.id, second.id, first.id]), await store.assignCategory(APP, outage.id, [first.id, 999_999])]);
    record(await store.annotations(APP, { categoryId: outage.id }));
    record([await store.deleteCategory(APP, outage.id), await store.deleteCategory(APP, outage.id)]);
    record([await store.deleteAnnotation(APP, second.id), await store.deleteAnnotation(APP, second.id)]);
    record([await store.annotation(APP, first.id), await store.annotation(APP, second.id)]);
  });
  expect(duck!.length).toBe(12);
  expect(pg).toEqual(duck);
});

test('cohorts, their members in the engine and export jobs', async () => {
  const [duck, pg] = await onBothSides(async ({ sql, engine }, record) => {
    const store = new CohortStore(sql, engine);
    // Ids are random: the transcript names cohorts by their order of creation.
    const ids: string[] = [];
    const named = (id: string) => `cohort ${ids.indexOf(id)}`;
    const cohorts = async () => (await store.cohorts(APP)).map((cohort) => ({ ...cohort, id: named(cohort.id) }));
    ids.push(await store.save(APP, { name: 'Buyers', owner: 'ada@example.com', published: true }, [3, 1, 2, 2], 1000));
    ids.push(await store.save(APP, { name: 'Empty', owner: 'bob@example.com', published: false }, [], 1500));
    record(await cohorts());
    await store.changeMembers(APP, ids[0]!, [{ add: false, svcIds: [1] }, { add: true, svcIds: [5, 3, 1] }, { add: false, svcIds: [2] }], 2000);
    await store.save(APP, { name: 'Some', owner: 'cy@example.com', published: true, existingId: ids[1] }, [7], 2500);
    record([await store.members(APP, ids[0]!), await store.members(APP, ids[1]!)]);
    record(await cohorts());
    await store.requestExport(APP, ids[0]!, ['gp:plan', 'country'], 3000, 'req-1');
    await store.requestExport(APP, ids[1]!, null, 3100, 'req-2');
    await store.completeExport('req-1', 'svc_id,user_id\n');
    record([await store.exportJob(APP, 'req-1'), await store.exportJob(APP + 1, 'req-1'), await store.exportJobById('req-2')].map((job) => job && { ...job, cohortId: named(job.cohortId) }));
    const builtIns = new Map([['country', 'country'], ['version', 'app_version'], ['language', 'language']]);
    const properties = await store.userProperties(APP, await store.members(APP, ids[0]!), builtIns);
    record([...properties].map(([svcId, values]) => [svcId, [...values]]));
  });
  expect((duck![4] as [number, [string, string][]][]).some(([, values]) => values.length > 0)).toBe(true);
  expect(pg).toEqual(duck);
});

const eventType = (name: string, change: Partial<EventTypeEntry> = {}): EventTypeEntry => ({ ...newEntry(name), ...change });

test('the taxonomy: categories, event types, event and user properties', async () => {
  const [duck, pg] = await onBothSides(async ({ sql }, record) => {
    const store = new TaxonomyStore(sql);
    record([await store.saveCategory(APP, 'Commerce'), await store.saveCategory(APP, 'Engagement'), await store.saveCategory(APP, 'Commerce')]);
    const [commerce, engagement] = await store.categories(APP);
    record([await store.saveCategory(APP, 'Shopping', commerce!.id), await store.saveCategory(APP, 'Shopping', 999), await store.categories(APP)]);
    const plan = (appId: number) =>
      store.change(appId, async (taxonomy) => ({
        types: await taxonomy.eventTypes(),
        shared: await taxonomy.eventProperties(null),
        ofBuy: await taxonomy.eventProperties('purchase'),
        named: await taxonomy.eventPropertiesNamed('amount', 'colour'),
        users: await taxonomy.userProperties(),
        category: [await taxonomy.categoryName(commerce!.id), await taxonomy.categoryId('Engagement')],
      }));
    await store.change(APP, async (taxonomy) => {
      await taxonomy.saveEventType(eventType('buy', { categoryId: commerce!.id, tags: ['money', 'core'], owner: 'ada', hidden: { ...eventType('x').hidden, is_hidden_from_pathfinder: true } }));
      await taxonomy.saveEventType(eventType('open', { categoryId: engagement!.id, description: 'App opened', displayName: 'Open app' }));
      const amount = { name: 'amount', description: 'Paid', type: 'number' as const, regex: null, enumValues: null, isArray: false, classifications: ['REVENUE' as const] };
      await taxonomy.saveEventProperties([
        { ...amount, eventType: null, override: false, isRequired: false, isHidden: false },
        { ...amount, eventType: 'buy', override: true, isRequired: true, isHidden: false, description: 'Paid for the cart' },
        { name: 'colour', description: '', type: 'enum', regex: null, enumValues: ['red', 'blue'], isArray: true, classifications: [], eventType: 'buy', override: false, isRequired: false, isHidden: true },
      ]);
      await taxonomy.saveUserProperty({ name: 'plan', description: 'Billing plan', type: 'string', regex: '^[a-z]+$', enumValues: null, isArray: false, classifications: ['SENSITIVE', 'PII'] });
    });
    await store.change(APP, async (taxonomy) => {
      await taxonomy.saveEventType(eventType('purchase', { ...(await taxonomy.eventType('buy'))!, name: 'purchase', transformedFrom: 'buy' }), 'buy');
      await taxonomy.renameEventTypeOfProperties('buy', 'purchase');
      record([await taxonomy.transformationOf('buy'), await taxonomy.eventType('buy')]);
    });
    await expect(
      store.change(APP, async (taxonomy) => {
        await taxonomy.removeUserProperty('plan');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    record(await plan(APP));
    record([...(await store.eventTypeNames(APP)).flags], [...(await store.eventTypeNames(APP)).ingestedNames]);
    record([await store.deleteCategory(APP, commerce!.id), await store.deleteCategory(APP, commerce!.id)]);
    await store.change(APP, async (taxonomy) => {
      await taxonomy.removeSharedEventProperty('amount');
      await taxonomy.removeEventPropertiesOf('open');
    });
    record(await plan(APP));
  });
  expect(duck!.length).toBe(8);
  expect(pg).toEqual(duck);
});

test('event streaming: batches cut from the engine, attempts and settled figures', async () => {
  const [duck, pg] = await onBothSides(async ({ sql, engine }, record) => {
    const store = new StreamStore(sql, engine);
    const opens = { syncId: 'opens', appId: APP, eventTypes: ['open'], since: T0 };
    const all = { syncId: 'all', appId: APP, since: T0 };
    record([await store.cutBatches(all, 2, 5, 60_000), await store.cutBatches(all, 2, 5, 60_000), await store.cutBatches(opens, 2, 10, 60_000), await store.cutBatches(opens, 2, 10, 60_000)]);
    const due = await store.dueBatches('all', T0 + 20_000);
    record(due, await store.dueBatches('opens', T0 + 20_000));
    record(await Promise.all(due.map((batch) => store.batchEvents(batch.batchId))));
    const attempt = { syncId: 'all', events: 2, status: 200, error: null, nextAttemptAt: null };
    await store.recordAttempt({ ...attempt, batchId: due[0]!.batchId, attempt: 1, attemptedAt: T0 + 20_000, answeredAt: T0 + 20_100, outcome: 'delivered' });
    await store.recordAttempt({ ...attempt, batchId: due[1]!.batchId, attempt: 1, attemptedAt: T0 + 20_000, answeredAt: T0 + 20_200, outcome: 'retry', status: 503, nextAttemptAt: T0 + 30_000 });
    await store.recordAttempt({ ...attempt, batchId: due[1]!.batchId, attempt: 2, attemptedAt: T0 + 30_000, answeredAt: T0 + 31_000, outcome: 'delivered' });
    await store.recordAttempt({ ...attempt, batchId: due[2]!.batchId, events: 1, attempt: 1, attemptedAt: T0 + 20_000, answeredAt: T0 + 20_300, outcome: 'discarded', status: 400, error: 'bad' });
    record(await store.dueBatches('all', T0 + 40_000));
    record(await store.settled('all', { start: T0, end: T0 + 60_000 }), await store.settled('all', { start: T0 + 25_000, end: T0 + 60_000 }));
  });
  expect(duck![0]).toEqual([5, 1, 3, 0]);
  expect(pg).toEqual(duck);
});

test('session replays and their files', async () => {
  const [duck, pg] = await onBothSides(async ({ sql }, record) => {
    const store = new ReplayStore(sql);
    await store.addFile(APP, { deviceId: 'd1', sessionId: '100', startMs: 5000, endMs: 6000 }, '[1]');
    await store.addFile(APP, { deviceId: 'd1', sessionId: '100', startMs: 4000, endMs: 5500 }, '[2]');
    await store.addFile(APP, { deviceId: 'd1', sessionId: '100', startMs: 5000, endMs: 7000 }, '[3]');
    await store.addFile(APP, { deviceId: 'd2', sessionId: '100', startMs: 5000, endMs: 5100 }, '[4]');
    await store.addFile(APP, { deviceId: 'D0', sessionId: '9', startMs: 1000, endMs: 2000 }, '[5]');
    await store.addFile(APP + 1, { deviceId: 'd1', sessionId: '100', startMs: 5000, endMs: 6000 }, '[6]');
    const kept = { keptSinceMs: 0 };
    record(await store.replays(APP, kept, false, undefined, 10), await store.replays(APP, kept, true, undefined, 10));
    record(await store.replays(APP, kept, false, { deviceId: 'd1', sessionId: '100', startMs: 4000 }, 1), await store.replays(APP, { ...kept, fromMs: 2000, toMs: 5000 }, true, undefined, 10));
    record(await store.replays(APP, { keptSinceMs: 4500 }, false, undefined, 10));
    const key = { deviceId: 'd1', sessionId: '100' };
    const files = await store.files(APP, key, 0, undefined, 10);
    record(files, await store.files(APP, key, 0, files[0], 1), await store.files(APP, key, 4500, undefined, 10));
    record(await Promise.all(files.map((file) => store.fileEvents(file.id, 0))), await store.fileEvents(files[0]!.id, 4500));
    record(await store.replay(APP, key, 0), await store.replay(APP, key, 4500));
    await store.forgetDevices(APP, ['d1', 'D0']);
    record(await store.replays(APP, kept, false, undefined, 10), await store.replays(APP + 1, kept, false, undefined, 10), await store.files(APP, key, 0, undefined, 10));
  });
  expect(duck![0]).toHaveLength(3);
  expect(pg).toEqual(duck);
});

test('deletion jobs, user mappings and feedback', async () => {
  const [duck, pg] = await onBothSides(async ({ sql }, record) => {
    const entities = new SharedEntities(sql);
    const entry = (svcId: number, requester: string | null, requestedOnDay = '2026-11-01') => ({ svcId, requester, requestedOnDay });
    await entities.addDeletionEntries(APP, '2026-11-10', [entry(3, 'ada@example.com'), entry(1, null)]);
    await entities.addDeletionEntries(APP, '2026-11-10', [entry(1, 'again', '2026-11-02'), entry(2, 'bob@example.com')]);
    await entities.addDeletionEntries(APP, '2026-11-20', [entry(5, null)]);
    await entities.addDeletionEntries(APP + 1, '2026-11-05', [entry(9, null)]);
    record([await entities.stagingDeletionJob(APP, '2026-11-09'), await entities.stagingDeletionJob(APP, '2026-11-10'), await entities.stagingDeletionJob(APP, '2026-11-20')]);
    record([await entities.removeDeletionEntry(APP, '2026-11-10', 2), await entities.removeDeletionEntry(APP, '2026-11-10', 2)]);
    record(await entities.dueDeletionJobs('2026-11-10'));
    await entities.applyUserMappings([[APP, 1, 2, 'ada', 'bob'], [APP, 3, 2, 'cy', 'bob'], [APP, 4, 1, 'dee', 'ada'], [APP + 1, 1, 2, 'ada', 'bob']]);
    // A remapped user and an unmapped one.
    await entities.applyUserMappings([[APP, 3, 5, 'cy', 'eve'], [APP, 4, null, 'dee', null]]);
    record(await entities.mappingsOf(APP, 2), await entities.mappingsOf(APP, 3), await entities.mappingsOf(APP, 4));
    // A scrub recorded in a transaction that then fails is rolled back with it.
    const failed = entities.transaction(async (tx) => {
      await entities.recordScrub(APP, '2026-11-10', [1, 3], '2026-11-10', tx);
      throw new Error('the engine failed after the scrub was recorded');
    });
    await expect(failed).rejects.toThrow('the engine failed');
    record(await entities.dueDeletionJobs('2026-11-10'), await entities.mappingsOf(APP, 2));
    await entities.recordScrub(APP, '2026-11-10', [1, 3], '2026-11-10');
    record(await entities.deletionJobs(APP, '2026-11-01', '2026-11-30'), await entities.dueDeletionJobs('2026-11-30'));
    record(await entities.mappingsOf(APP, 2), await entities.mappingsOf(APP, 5), await entities.mappingsOf(APP + 1, 2));
    await entities.upsertFeedbackItems(APP, 'src', [{ unique_id: 'i1', body: 'slow', author: 'ada', conversation_parts: [{ unique_id: 'p2', body: 'first' }, { unique_id: 'p1', body: 'second', created_at: '2026-11-01T00:00:00Z' }] }], '2026-11-02T00:00:00Z');
    await entities.upsertFeedbackItems(APP, 'src', [{ unique_id: 'i1', email: 'ada@example.com', conversation_parts: [{ unique_id: 'p2', body: 'first, edited' }, { unique_id: 'p3', body: 'third' }] }, { unique_id: 'i2', created_at: '2026-10-01T00:00:00Z' }], '2026-11-03T00:00:00Z');
    record(await entities.feedbackItem(APP, 'src', 'i1'), await entities.feedbackItem(APP, 'src', 'i2'), await entities.feedbackItem(APP, 'other', 'i1'));
  });
  expect(duck!.length).toBe(16);
  expect(pg).toEqual(duck);
  // After the failed transaction the job is still due and ada still mapped to bob.
  expect(duck!.slice(6, 8)).toEqual([
    [
      { appId: APP + 1, day: '2026-11-05' },
      { appId: APP, day: '2026-11-10' },
    ],
    { mappedFrom: [{ svcId: 1, userId: 'ada' }], mappedTo: [] },
  ]);
});

test('processes creating the tables at once on a new database all succeed', async () => {
  const admin = new pg.Client(postgres.url);
  await admin.connect();
  try {
    for (let round = 0; round < 5; round++) {
      await admin.query(`CREATE DATABASE tables_at_once_${round}`);
      const url = new URL(postgres.url);
      url.pathname = `/tables_at_once_${round}`;
      const processes = [postgresSession(url.href), postgresSession(url.href), postgresSession(url.href)];
      try {
        const firstUses = processes.flatMap((sql) => [new TaxonomyStore(sql).categories(APP), new AnnotationStore(sql).categories(APP), new ReplayStore(sql).replay(APP, { deviceId: 'd', sessionId: '1' }, 0)]);
        expect((await Promise.allSettled(firstUses)).filter((use) => use.status === 'rejected')).toEqual([]);
      } finally {
        for (const session of processes) await session.close();
      }
    }
  } finally {
    await admin.end();
  }
});

test('two processes cutting the same destination at once stream each event once', async () => {
  const { engine } = sides[1]!;
  // Both read the cursor before either moves it: they meet before reading the events.
  let arrived = 0;
  let meet!: () => void;
  const met = new Promise<void>((resolve) => (meet = resolve));
  const events: StreamedEvents = {
    loadedIngestSeq: async () => {
      if (++arrived === 2) meet();
      await met;
      return engine.loadedIngestSeq();
    },
    streamedEvents: (query) => engine.streamedEvents(query),
    eventsBySeq: (ingestSeqs) => engine.eventsBySeq(ingestSeqs),
  };
  const otherSession = postgresSession(postgres.url);
  try {
    const processes = [new StreamStore(pgSession, events), new StreamStore(otherSession, events)];
    const selection = { syncId: 'cut-at-once', appId: APP, since: T0 };
    const cut = await Promise.all(processes.map((store) => store.cutBatches(selection, 2, 10, 60_000)));
    const batches = await processes[0]!.dueBatches('cut-at-once', T0 + 20_000);
    const streamed = (await Promise.all(batches.map((batch) => processes[0]!.batchEvents(batch.batchId)))).flat().map((event) => event.ingest_seq);
    expect([cut.sort((a, b) => a - b), streamed]).toEqual([[0, EVENTS.length], EVENTS.map((_, i) => i + 1)]);
  } finally {
    await otherSession.close();
  }
});

test('a connection ended by the server during a transaction fails that transaction only; the session goes on', async () => {
  const killer = postgresSession(postgres.url, { maxConnections: 1 });
  try {
    const ended = pgSession.transaction(async (tx) => {
      const [{ pid }] = (await tx.rows('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
      await killer.rows('SELECT pg_terminate_backend(?)', [pid]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await tx.rows('SELECT 1');
    });
    await expect(ended).rejects.toThrow();
    expect(await pgSession.rows('SELECT 2 AS two')).toEqual([{ two: 2 }]);
  } finally {
    await killer.close();
  }
});
