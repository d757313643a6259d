// The same journal segments and entity calls on DuckDbEngine and ClickHouseEngine (18.16 on
// loopback, entities in an in-memory DuckDB session): equal answers for events, identities
// and merges, profiles and their versions, group profiles, attribution holds, insert ids,
// advertising ids, deletion scrubs, user mappings and feedback; reloads and a load cut short
// never count a segment twice.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ClickHouseEngine } from '../../../src/store/clickhouse/engine.js';
import { currentUserMappings } from '../../../src/store/clickhouse/tables.js';
import type { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { EVENT_COLUMNS, journalLine } from '../../../src/store/journal-line.js';
import type { Engine, JournalRecord, StoredEvent } from '../../../src/store/types.js';
import { EnginePair } from './engines.js';

const APP = 3;
const T0 = Date.UTC(2026, 2, 30, 12);
const DATABASE = 'engine_test';

let pair: EnginePair;
let dir: string;
let duck: DuckDbEngine;
let ch: ClickHouseEngine;
let segments = 0;

function event(fields: Partial<StoredEvent>): StoredEvent {
  const empty = Object.fromEntries(Object.keys(EVENT_COLUMNS).map((name) => [name, null])) as unknown as StoredEvent;
  return { ...empty, app_id: APP, event_type: 'Page', time: T0, server_upload_time: T0, skip_user_properties_sync: false, ...fields };
}

/** Writes the records as a journal segment and loads it into both engines; its name. */
async function load(records: JournalRecord[]): Promise<string> {
  const name = `segment-${++segments}`;
  for (const engine of [duck, ch] as Engine[]) {
    const path = join(dir, `${name}-${engine === duck ? 'duck' : 'ch'}.jsonl`);
    writeFileSync(path, `${records.map((record) => journalLine(record)).join('\n')}\n`);
    await engine.loadSegment(path, name);
  }
  return name;
}

/** The svc_id of each id as a user and as a device, and the user id of the user's svc_id. */
async function svcIdsOf(engine: Engine, ids: string[]) {
  const users = await engine.svcIdsOfUsers(APP, ids);
  const devices = await engine.svcIdsOfDevices(APP, ids);
  const userIds = await engine.userIdsOfSvcIds(APP, [...users.values()]);
  return ids.map((id) => [users.get(id), devices.get(id), userIds.get(users.get(id) ?? -1)]);
}

const svcIdOfUser = async (engine: Engine, userId: string) => (await engine.svcIdsOfUsers(APP, [userId])).get(userId);

/** What each engine answers, for comparison. */
async function state(engine: Engine) {
  const ids = ['u1', 'u2', 'u3', 'd0', 'd1', 'd2', 'd3', 'd4', 'd5'];
  return {
    events: await engine.events(APP),
    profiles: await Promise.all(ids.map((id) => engine.userProfile(APP, id))),
    svcIds: await svcIdsOf(engine, ids),
    versions: await engine.query('SELECT app_id, svc_id, ingest_seq, properties FROM profile_versions ORDER BY ingest_seq'),
    group: await engine.groupProfile(APP, { group_type: 'org', group_value: 'acme' }),
    otherGroup: await engine.groupProfile(APP, { group_type: 'org', group_value: 'umbrella' }),
    insertIds: await allOf(engine.recentInsertIds(T0 - 1)),
    advertising: (await engine.knownAdvertisingIds(0)).sort((a, b) => a.value.localeCompare(b.value)),
    held: await engine.heldAttributions(0),
  };
}

/** The mappings reporting reads (DuckDB's table, ClickHouse's mirror), and the cohorts' members. */
async function reporting(engine: DuckDbEngine | ClickHouseEngine) {
  const mappings = engine === duck ? `SELECT from_svc, to_svc FROM user_mappings WHERE app_id = ${APP}` : currentUserMappings(APP);
  return {
    mappings: await engine.query(`SELECT from_svc, to_svc FROM (${mappings}) ORDER BY from_svc`),
    members: await engine.cohortMembers(APP, 'c1'),
    sizes: await engine.cohortSizes(APP),
  };
}

async function allOf<T>(chunks: AsyncIterable<T[]>): Promise<T[]> {
  const all: T[] = [];
  for await (const chunk of chunks) all.push(...chunk);
  return all;
}

async function reopen(): Promise<void> {
  await pair.reopen();
  ({ duck, ch } = pair);
}

beforeAll(async () => {
  pair = await EnginePair.open(DATABASE);
  ({ dir, duck, ch } = pair);
}, 60_000);

afterAll(() => pair?.close());

describe('ClickHouseEngine answers as DuckDbEngine', () => {
  test('segments: identities, merges, profiles and versions, group profiles, holds', async () => {
    await load([
      event({ user_id: 'u1', device_id: 'd0', insert_id: 'i-1', idfa: 'ad-1' }),
      event({ device_id: 'd1', event_type: '$identify', user_properties: { $set: { plan: 'free', n: 1 } }, time: T0 + 1 }),
      event({ device_id: 'd2', event_type: '$identify', user_properties: { $set: { from: 'device-2' } }, time: T0 + 2 }),
      event({ user_id: 'u1', event_type: '$identify', user_properties: { $set: { own: true }, $add: { n: 2 } }, time: T0 + 3, insert_id: 'i-2' }),
      event({ event_type: '$groupidentify', groups: { org: ['acme', 'umbrella'] }, group_properties: { $set: { size: 10 } }, time: T0 + 4 }),
      { held_attribution: { id: 'h-1', app_id: APP, received_at: T0 + 5, event: { idfa: 'ad-2', campaign: 'spring' } } },
      { held_attribution: { id: 'h-2', app_id: APP, received_at: T0 + 6, event: { idfa: 'ad-3' } } },
      event({ device_id: 'd3', idfa: 'ad-1', time: T0 + 7, server_upload_time: T0 + 7 }),
    ]);
    expect(await state(ch)).toEqual(await state(duck));
    await load([
      // d1 joins the new user u2 (who takes its id and profile); d2 is merged into u1 (u1's profile wins).
      event({ user_id: 'u2', device_id: 'd1', time: T0 + 10, insert_id: 'i-3' }),
      event({ user_id: 'u1', device_id: 'd2', time: T0 + 11, server_upload_time: T0 + 11 }),
      event({ user_id: 'u2', event_type: '$identify', user_properties: { $set: { plan: 'paid' }, $unset: { n: '-' } }, time: T0 + 12 }),
      event({ event_type: '$groupidentify', groups: { org: 'acme' }, group_properties: { $add: { size: 5 } }, time: T0 + 13 }),
      { ...event({ device_id: 'd4', idfa: 'ad-2', time: T0 + 14, server_upload_time: T0 + 14 }), released_attribution: 'h-1' },
    ]);
    const [duckState, chState] = [await state(duck), await state(ch)];
    expect(chState).toEqual(duckState);
    expect(chState.held.map((h) => h.id)).toEqual(['h-2']);
    expect(chState.profiles[0]).toEqual({ own: true, n: 2 });
    expect(new Set(chState.events.filter((e) => e.device_id === 'd2' || e.user_id === 'u1').map((e) => e.svc_id)).size).toBe(1);
    expect(chState.group).toEqual({ size: 15 });
  }, 60_000);

  test('the user data of cohort files and the events of streaming (UserData, StreamedEvents)', async () => {
    const answers = async (engine: DuckDbEngine | ClickHouseEngine) => {
      const svcIds = [...new Set((await engine.events(APP)).map((e) => e.svc_id!))].sort((a, b) => a - b);
      const all = { appId: APP, afterSeq: 0, untilSeq: 1_000, since: 0, limit: 1_000 };
      const streamed = await engine.streamedEvents(all);
      return {
        profiles: [...(await engine.profileProperties(APP, [...svcIds, 999]))].sort(([a], [b]) => a - b),
        otherProject: [...(await engine.profileProperties(APP + 1, svcIds))],
        // idfa is NULL on most events: the latest event that has a value counts.
        latest: [...(await engine.latestEventValues(APP, svcIds, new Map([['idfa', 'idfa'], ['device', 'device_id'], ['insert', 'insert_id']])))]
          .sort(([a], [b]) => a - b)
          .map(([svcId, values]) => [svcId, [...values]]),
        loaded: await engine.loadedIngestSeq(APP),
        streamed,
        identifies: await engine.streamedEvents({ ...all, eventTypes: ['$identify'] }),
        noTypes: await engine.streamedEvents({ ...all, eventTypes: [] }),
        page: await engine.streamedEvents({ ...all, afterSeq: 2, untilSeq: 9, limit: 3 }),
        recent: await engine.streamedEvents({ ...all, since: T0 + 7 }),
        // DuckDB's own row number `seq` is not an event field (the streamer leaves it out).
        events: (await engine.eventsBySeq(streamed.map((e) => e.ingestSeq).reverse())).map(({ seq: _, ...event }) => event),
      };
    };
    const [duckAnswers, chAnswers] = [await answers(duck), await answers(ch)];
    expect(chAnswers).toEqual(duckAnswers);
    expect(chAnswers.latest.some(([, values]) => (values as [string, unknown][]).some(([name, value]) => name === 'idfa' && value === 'ad-1'))).toBe(true);
    expect(chAnswers.page).toHaveLength(3);
    expect(chAnswers.recent.length).toBeGreaterThan(1);
    expect(chAnswers.recent.length).toBeLessThan(chAnswers.streamed.length);
    expect(chAnswers.events.length).toBeGreaterThan(5);
  });

  test('user mappings and feedback', async () => {
    for (const engine of [duck, ch] as Engine[]) {
      await engine.applyUserMappings([APP, APP + 1], [
        { userId: 'u1', globalUserId: 'global-1' },
        { userId: 'u2', globalUserId: 'global-1' },
        { userId: 'new-user', globalUserId: 'u3' },
      ]);
      await engine.applyUserMappings([APP], [{ userId: 'u2', globalUserId: null }]);
      await engine.upsertFeedbackItems(APP, 'src', [{ unique_id: 'f1', body: 'hello', conversation_parts: [{ unique_id: 'p1', body: 'first' }, { unique_id: 'p2', body: 'second' }] }], '2026-03-30');
      await engine.upsertFeedbackItems(APP, 'src', [{ unique_id: 'f1', author: 'ann', conversation_parts: [{ unique_id: 'p1', body: 'edited' }] }], '2026-03-31');
    }
    const answers = async (engine: Engine) => ({
      mappings: [...(await engine.userMappings(APP, ['u1', 'u2', 'u3', 'global-1', 'new-user', 'nobody']))],
      otherApp: [...(await engine.userMappings(APP + 1, ['u1', 'global-1']))],
      feedback: await engine.feedbackItem(APP, 'src', 'f1'),
      missing: await engine.feedbackItem(APP, 'src', 'f2'),
    });
    const [duckAnswers, chAnswers] = [await answers(duck), await answers(ch)];
    expect(chAnswers).toEqual(duckAnswers);
    expect(chAnswers.mappings.find(([user]) => user === 'global-1')?.[1].mappedFrom.map((m) => m.userId)).toEqual(['u1']);
    expect(chAnswers.feedback?.conversation_parts.map((p) => p.body)).toEqual(['edited', 'second']);
    expect((await reporting(ch)).mappings).toEqual((await reporting(duck)).mappings);
    expect((await reporting(ch)).mappings.length).toBe(2);
  }, 60_000);

  test('a deletion job scrubs the users from events, profiles and identities', async () => {
    for (const engine of [duck, ch] as Engine[]) {
      const u1 = (await svcIdOfUser(engine, 'u1'))!;
      await engine.addDeletionEntries(APP, '2026-04-02', [{ svcId: u1, requester: 'admin', requestedOnDay: '2026-03-31' }]);
      await engine.addDeletionEntries(APP, '2026-04-02', [{ svcId: (await svcIdOfUser(engine, 'u3'))!, requester: null, requestedOnDay: '2026-03-31' }]);
      expect(await engine.removeDeletionEntry(APP, '2026-04-02', (await svcIdOfUser(engine, 'u3'))!)).toBe(true);
    }
    const jobs = async (engine: Engine) => ({
      staging: await engine.stagingDeletionJob(APP, '2026-03-31'),
      jobs: await engine.deletionJobs(APP, '2026-04-01', '2026-04-30'),
      due: await engine.dueDeletionJobs('2026-04-02'),
      devices: (await engine.devicesOfDeletionJob(APP, '2026-04-02')).sort(),
      withData: [...(await engine.svcIdsWithData(APP, [1, 2, 3, 4, 5, 6, 7]))].sort(),
    });
    const before = await jobs(ch);
    expect(before).toEqual(await jobs(duck));
    expect(before.devices).toEqual(['d0', 'd2']);
    for (const engine of [duck, ch]) {
      const u2 = await svcIdOfUser(engine, 'u2');
      await engine.replaceCohortMembers(APP, 'c1', [1, 2, 3, 4, 5, 6, 7].filter((id) => id !== u2));
    }
    const members = await reporting(ch);
    expect(members).toEqual(await reporting(duck));
    const u1 = (await svcIdOfUser(ch, 'u1'))!;
    expect(members.members).toContain(u1);
    for (const engine of [duck, ch] as Engine[]) await engine.scrubDeletionJob(APP, '2026-04-02', '2026-04-02');
    const scrubbed = await reporting(ch);
    expect(scrubbed).toEqual(await reporting(duck));
    expect(scrubbed.members).not.toContain(u1);
    expect(scrubbed.mappings.length).toBe(1);
    const [duckState, chState] = [await state(duck), await state(ch)];
    expect(chState).toEqual(duckState);
    expect(chState.events.some((e) => e.user_id === 'u1' || e.device_id === 'd2')).toBe(false);
    expect(chState.profiles[0]).toBeUndefined();
    expect(await jobs(ch)).toEqual(await jobs(duck));
    await reopen();
    expect(await state(ch)).toEqual(await state(duck));
  }, 60_000);

  test("the mirror of user mappings takes the shared store's at open (a process ended between the two writes)", async () => {
    const expected = (await reporting(duck)).mappings;
    expect(expected.length).toBe(1);
    // Left behind: the mirror lost the mapping; ahead: it holds one the shared store does not.
    await command('ALTER TABLE user_mappings DELETE WHERE 1');
    await waitForMutations();
    await command(`INSERT INTO user_mappings VALUES (${APP}, 9001, 9002, 1)`);
    expect((await reporting(ch)).mappings).not.toEqual(expected);
    await reopen();
    expect((await reporting(ch)).mappings).toEqual(expected);
  }, 60_000);

  // Last: a load run again after a crash draws new svc_ids and ingest_seqs (the clocks never go
  // back, other processes may have drawn after it), so the states compare renumbered.
  test('a segment loaded again, or reloaded after a load cut short, counts once; identities survive a restart', async () => {
    // An anonymous device that turns out to be u3's: the reload merges it again.
    const name = await load([event({ device_id: 'd5', time: T0 + 30 }), event({ user_id: 'u3', device_id: 'd5', time: T0 + 31 })]);
    const before = await state(ch);
    await ch.loadSegment(join(dir, `${name}-ch.jsonl`), name);
    expect(await state(ch)).toEqual(before);
    // A crash after the events were inserted and before the load was recorded.
    await command(`ALTER TABLE loaded_segments DELETE WHERE name IN ('${name}', '${name}#${APP}')`);
    await waitForMutations();
    expect(await ch.isLoaded(name)).toBe(false);
    await reopen();
    await ch.loadSegment(join(dir, `${name}-ch.jsonl`), name);
    expect(await ch.isLoaded(name)).toBe(true);
    expect(renumbered(await state(ch))).toEqual(renumbered(before));
    await load([event({ user_id: 'u3', device_id: 'd4', event_type: '$identify', user_properties: { $set: { late: 1 } }, time: T0 + 20 })]);
    expect(renumbered(await state(ch))).toEqual(renumbered(await state(duck)));
  }, 60_000);
});

/** The state with svc_ids and ingest_seqs numbered in order of appearance (events first), to compare loads that drew different ones. */
function renumbered(answers: Awaited<ReturnType<typeof state>>) {
  const labels = (prefix: string) => {
    const seen = new Map<number, string>();
    return (value: number | null | undefined) => (value === null || value === undefined ? value : seen.get(value) ?? (seen.set(value, `${prefix}${seen.size}`), seen.get(value)!));
  };
  const [svc, seq] = [labels('svc'), labels('seq')];
  return {
    ...answers,
    events: answers.events.map((event) => ({ ...event, svc_id: svc(event.svc_id) })),
    svcIds: answers.svcIds.map(([user, device, userId]) => [svc(user as number | undefined), svc(device as number | undefined), userId]),
    versions: answers.versions.map((row) => ({ ...row, svc_id: svc(row.svc_id as number), ingest_seq: seq(row.ingest_seq as number) })),
  };
}

const command = (sql: string) => pair.command(sql);
const waitForMutations = () => pair.waitForMutations();
