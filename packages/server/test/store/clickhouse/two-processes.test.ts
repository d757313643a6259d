// Two server processes' stores on one ClickHouse database and one PostgreSQL database (issue
// 14): each has its own journal and engine, their segment loads run at the same time, a
// project's loads taking turns under its PostgreSQL lock. A repeat sent to both is stored once, a user sending
// through both has one svc_id, a device identified in one merges with its user seen in the
// other, and the ingestion order stays unique.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ClickHouseServer, startClickHouse } from '../../../../../scripts/clickhouse/start.mjs';
import { type PostgresServer, startPostgres } from '../../../../../scripts/postgres/start.mjs';
import { type RunningServer, startServer } from '../../../src/server.js';
import { ClickHouseEngine } from '../../../src/store/clickhouse/engine.js';
import { EVENT_COLUMNS } from '../../../src/store/journal-line.js';
import { journalId } from '../../../src/store/journal-id.js';
import { JournalledStore } from '../../../src/store/journalled-store.js';
import { postgresLoadLock } from '../../../src/store/load-lock.js';
import { type PostgresSession, postgresSession } from '../../../src/store/postgres/sql-session.js';
import type { StoredEvent } from '../../../src/store/types.js';

const APP = 5;
const T0 = Date.UTC(2026, 10, 20, 12);
const DATABASE = 'two_processes';

interface Process {
  engine: ClickHouseEngine;
  store: JournalledStore;
  session: PostgresSession;
  dir: string;
}

let clickhouse: ClickHouseServer;
let postgres: PostgresServer;
let a: Process;
let b: Process;

function event(fields: Partial<StoredEvent>): StoredEvent {
  const empty = Object.fromEntries(Object.keys(EVENT_COLUMNS).map((name) => [name, null])) as unknown as StoredEvent;
  return { ...empty, app_id: APP, event_type: 'Page', time: T0, server_upload_time: T0, skip_user_properties_sync: false, ...fields };
}

/** A server process's store: its own data dir (journal), the shared databases, its own pool. */
async function startProcess(): Promise<Process> {
  const session = postgresSession(postgres.url, { maxConnections: 3 });
  const dir = mkdtempSync(join(tmpdir(), 'svc-two-processes-'));
  const shared = { loadLock: postgresLoadLock(session), journalId: await journalId(dir) };
  const engine = await ClickHouseEngine.open({ url: clickhouse.url, database: DATABASE }, session, shared);
  const store = await JournalledStore.open(engine, dir, { loadIntervalMs: 3_600_000, segmentBytes: 1 << 30, log: () => undefined });
  return { engine, store, session, dir };
}

/** Each process journals its events, then both load their segments at the same time. */
async function send(toA: StoredEvent[], toB: StoredEvent[]): Promise<void> {
  await Promise.all([a.store.append(toA), b.store.append(toB)]);
  await Promise.all([a.store.flush(), b.store.flush()]);
}

const rows = (sql: string) => a.engine.query(sql);

beforeAll(async () => {
  [clickhouse, postgres] = await Promise.all([startClickHouse(), startPostgres()]);
  [a, b] = await Promise.all([startProcess(), startProcess()]);
}, 60_000);

afterAll(async () => {
  for (const process of [a, b]) {
    await process?.store.close();
    await process?.session.close();
    if (process) rmSync(process.dir, { recursive: true, force: true });
  }
  await Promise.all([clickhouse?.stop(), postgres?.stop()]);
});

describe('two processes loading into one ClickHouse database', () => {
  test('repeats stored once, one svc_id per user, merges across processes, unique ingestion order', async () => {
    const users = (prefix: string) => Array.from({ length: 20 }, (_, i) => event({ user_id: `${prefix}-${i}`, time: T0 + i }));
    // Round 1: the same insert_id and user to both; a device seen anonymously by A; new users on each side.
    await send(
      [event({ user_id: 'u1', insert_id: 'dup-1' }), event({ device_id: 'd3', time: T0 + 1 }), ...users('a')],
      [...users('b'), event({ user_id: 'u1', insert_id: 'dup-1', server_upload_time: T0 + 5 }), event({ user_id: 'u1', time: T0 + 2 })],
    );
    // Round 2: A identifies the device as u3 while B sees u3 on its own; both see more new users.
    await send(
      [event({ user_id: 'u3', device_id: 'd3', time: T0 + 10 }), event({ device_id: 'd3', time: T0 + 11 }), ...users('a2')],
      [event({ user_id: 'u3', time: T0 + 12 }), event({ user_id: 'u1', time: T0 + 13, insert_id: 'dup-2' }), ...users('b2')],
    );
    // Round 3: the repeat of a stored insert_id sent to the other process, and u1 again on A.
    await send([event({ user_id: 'u1', insert_id: 'dup-2', server_upload_time: T0 + 20 })], [event({ user_id: 'u1', time: T0 + 21 })]);

    const [dup] = await rows("SELECT countIf(insert_id = 'dup-1') AS first, countIf(insert_id = 'dup-2') AS second, count() AS events FROM events");
    // Round 1: 22 + 22 - the repeat; round 2: 22 + 22; round 3: the other process's repeat dropped.
    expect.soft(dup).toEqual({ first: 1, second: 1, events: 43 + 44 + 1 });

    const svcIdsOf = async (where: string) => (await rows(`SELECT DISTINCT svc_id FROM events WHERE ${where}`)).map((row) => row.svc_id);
    expect.soft(await svcIdsOf("user_id = 'u1'")).toHaveLength(1);
    expect.soft(await svcIdsOf("user_id = 'u3' OR device_id = 'd3'")).toHaveLength(1);

    // Never allocated twice: each user its own svc_id, each svc_id one user.
    const [identities] = await rows('SELECT count() AS users, uniqExact(user_id) AS user_ids, uniqExact(svc_id) AS svc_ids FROM identity_users');
    expect.soft(identities).toEqual({ users: 82, user_ids: 82, svc_ids: 82 });

    const [order] = await rows('SELECT count() AS events, uniqExact(ingest_seq) AS seqs FROM events');
    expect.soft(order!.seqs).toBe(order!.events);

    // Both processes answer with the same identities.
    for (const id of ['u1', 'u3']) expect.soft((await b.engine.svcIdsOfUsers(APP, [id])).get(id)).toBe((await a.engine.svcIdsOfUsers(APP, [id])).get(id));
    expect.soft((await b.engine.svcIdsOfDevices(APP, ['d3'])).get('d3')).toBe((await a.engine.svcIdsOfDevices(APP, ['d3'])).get('d3'));
  }, 120_000);

  test('a user mapping made through one process and a deletion scrubbed by the other reach both', async () => {
    await a.engine.applyUserMappings([APP], [{ userId: 'm-from', globalUserId: 'm-to' }]);
    await send([], [event({ user_id: 'm-to', time: T0 + 30 })]);
    // B answers for a user only A has seen, though B has loaded nothing since.
    await a.store.append([event({ user_id: 'p-only-a', event_type: '$identify', user_properties: { $set: { plan: 'pro' } }, time: T0 + 31 })]);
    await a.store.flush();
    expect.soft(await b.store.userProfile(APP, 'p-only-a')).toEqual({ plan: 'pro' });
    const [mapped] = await rows("SELECT DISTINCT svc_id FROM events WHERE user_id = 'm-to'");
    expect.soft(mapped?.svc_id).toBe((await a.engine.svcIdsOfUsers(APP, ['m-to'])).get('m-to'));

    const u1 = (await a.engine.svcIdsOfUsers(APP, ['u1'])).get('u1')!;
    await b.engine.addDeletionEntries(APP, '2026-11-21', [{ svcId: u1, requester: null, requestedOnDay: '2026-11-20' }]);
    await b.engine.scrubDeletionJob(APP, '2026-11-21', '2026-11-21');
    // The other process runs the same due job after it: nothing is scrubbed twice.
    const mutations = async () => (await rows('SELECT count() AS n FROM system.mutations WHERE database = currentDatabase()'))[0]!.n;
    const scrubbed = await mutations();
    await a.engine.scrubDeletionJob(APP, '2026-11-21', '2026-11-21');
    expect.soft(await mutations()).toBe(scrubbed);
    // Seen again after the scrub, through the process that did not scrub: a new user.
    await send([event({ user_id: 'u1', time: T0 + 40 })], []);
    const u1Now = await rows("SELECT DISTINCT svc_id FROM events WHERE user_id = 'u1'");
    expect.soft(u1Now).toHaveLength(1);
    expect.soft(u1Now[0]?.svc_id).not.toBe(u1);
    const [identities] = await rows("SELECT countIf(user_id = 'm-to') AS mapped, countIf(user_id = 'u1') AS u1, count() AS users, uniqExact(svc_id) AS svc_ids FROM identity_users");
    expect.soft(identities).toEqual({ mapped: 1, u1: 1, users: 85, svc_ids: 85 });
  }, 120_000);

  test("loads of different projects run at once; a project's loads take turns", async () => {
    const OTHER = APP + 1;
    const count = async (appId: number) => Number((await rows(`SELECT count() AS n FROM events WHERE app_id = ${appId} AND event_type = 'Turns'`))[0]!.n);
    // A third holder keeps APP's lock, as a long load of APP in another process would.
    const holder = postgresSession(postgres.url, { maxConnections: 1 });
    let release!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const held = postgresLoadLock(holder).hold({ appIds: [APP] }, async () => {
      locked();
      await new Promise<void>((resolve) => (release = resolve));
    });
    try {
      await isLocked;
      await b.store.append([event({ event_type: 'Turns', user_id: 'waits' })]);
      let waitedOut = false;
      const waiting = b.store.flush().then(() => (waitedOut = true));
      await a.store.append([event({ app_id: OTHER, event_type: 'Turns', user_id: 'other-project' })]);
      await a.store.flush();
      expect.soft(await count(OTHER)).toBe(1);
      expect.soft(waitedOut).toBe(false);
      expect.soft(await count(APP)).toBe(0);
      release();
      await waiting;
      expect.soft(await count(APP)).toBe(1);
    } finally {
      release?.();
      await held;
      await holder.close();
    }
  }, 120_000);

  test('two servers (own data dirs, one shared dir): both answer 200 to a repeat, it is stored once; a user through both is one', async () => {
    const shared = mkdtempSync(join(tmpdir(), 'svc-two-servers-shared-'));
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'svc-two-servers-')));
    const config = { sharedDir: shared, host: '127.0.0.1', port: 0, loadIntervalMs: 3_600_000, engine: 'clickhouse' as const, clickhouseUrl: clickhouse.url, clickhouseDatabase: 'two_servers', postgresUrl: postgres.url };
    const servers = await Promise.all(dirs.map((dataDir) => startServer({ ...config, dataDir })));
    try {
      const project = servers[0]!.tenancy.createProject(servers[0]!.tenancy.createOrganization('Org').id, 'Project');
      servers[1]!.tenancy.reload();
      const upload = (server: RunningServer, events: object[]) =>
        fetch(`${server.urls.ingest}/2/httpapi`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: project.api_key, events }) });
      const answers = await Promise.all(
        servers.map((server, i) => upload(server, [{ event_type: 'Page', user_id: 'user-both', insert_id: 'same-insert-id' }, { event_type: 'Page', user_id: `user-only-${i}` }])),
      );
      expect.soft(answers.map((answer) => answer.status)).toEqual([200, 200]);
      await Promise.all(servers.map((server) => server.store.flush()));
      const [stored] = await servers[0]!.store.query(
        "SELECT countIf(insert_id = 'same-insert-id') AS repeats, uniqExactIf(svc_id, user_id = 'user-both') AS both_ids, uniqExact(svc_id) AS svc_ids, count() AS events FROM events",
      );
      expect.soft(stored).toEqual({ repeats: 1, both_ids: 1, svc_ids: 3, events: 3 });
    } finally {
      for (const server of servers) await server.close();
      for (const dir of [shared, ...dirs]) rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
