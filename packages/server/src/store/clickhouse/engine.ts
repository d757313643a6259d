// The ClickHouse engine: the events, identities and profiles in ClickHouse 18.16, the other
// entities in a shared SQL store (../shared-entities.ts). Identity resolution and profile
// operations run in JS as in DuckDB, over the identities read back at open.
//
// A segment loads one project at a time (each under that project's lock, so processes load
// different projects at once), without transactions: every row a project's load writes carries
// the load's name; its events go in one INSERT, and a row in `loaded_segments`, written last,
// records the load as done. A load cut short (a crash, or an error on the way) leaves rows
// without that record; they are deleted by mutation before the load runs again (at open, or on
// the retry in the same process), so a segment never counts twice. Once every project's load is
// recorded, a row with the segment's own name records the segment as loaded (`isLoaded`). One INSERT alone
// is not atomic enough: 18.16 writes one part per month partition (and splits blocks at
// max_insert_block_size rows), each part committed on its own.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DEFAULT_INSERT_ID_WINDOW_MS } from '../../model/events.js';
import { Identities, type IdentityRows } from '../identity.js';
import { EVENT_COLUMNS, journalLine } from '../journal-line.js';
import { inProcessLoadLock, type LoadLock } from '../load-lock.js';
import { EngineClocks } from './clocks.js';
import type { Properties } from '../profiles.js';
import { SharedEntities, SharedEntityEngine, userMappingRows } from '../shared-entities.js';
import { ADVERTISING_ID_FIELDS, insertIdOf, type CohortMembers, type CohortMembershipChange, type Engine, type GroupKey, type HeldAttribution, type KnownAdvertisingId, type LoadedEvent, type SqlSession, type StreamedEvents, type StreamedEventsQuery, type UserData, type UserMappingChange, type ExportedEvents, type ExportHourSummary } from '../types.js';
import { exportHoursSql, exportRowsSql, type ExportSqlWords, hourSummary, linesText } from '../exported-events.js';
import { type ClickHouseOptions, ClickHouseEvents } from './events.js';
import { exportedUsers, USER_STATE_EXTRA_COLUMNS, withUserAtEvent } from './exported-users.js';
import { applyGroupProfiles, applyUserProfiles, storedProfiles } from './profiles.js';
import { ReportingRows } from './reporting-rows.js';
import { isEvent, linesByProject, LOAD_CHUNK_LINES, planSegment, resolvedEvent, scanSegment, type SegmentScan, SegmentLines, segmentRows } from './segment-lines.js';
import { insertRows, mutate, MUTATION_TIME_LIMIT_MS } from './statements.js';
import { integers, literal, quoted } from './sql-text.js';
import { withoutStoredRepeats } from './stored-repeats.js';
import { SEGMENT_TABLES } from './tables.js';
import type { TimelineCounts, TimelineCountsQuery } from '../timelines/counts.js';
import type { TimelineFunnelQuery } from '../timelines/funnel.js';
import type { FunnelGroup } from '../../model/funnel-times.js';
import { UserActivity } from './user-activity.js';
import { LoadedActivity, LocalDays } from './local-days.js';
import { streamedFunnel } from './user-timelines.js';
import { revertTornMerges } from './torn-merges.js';

type Row = Record<string, unknown>;
/** How this process loads next to others on the same database (defaults: it is the only one). */
export interface SharedLoading {
  /** Held by every load (for its project) and by open, across all processes loading into the database. */
  loadLock?: LoadLock;
  /** A name of this process's journal, unique among the processes and kept across restarts. */
  journalId?: string;
}

const EVENT_FIELDS = Object.keys(EVENT_COLUMNS);
/**
 * Changes of identities outside journal segments are recorded in `loaded_segments` too, with an
 * ingest_seq of their own (left unused), so other processes catch up on them in order: the
 * rows of a mapping carry its record's name (one per project); a scrub's record names the deletion job.
 */
const MAPPING_RECORD = 'mappings:';
const SCRUB_RECORD = /^scrub:(\d+):(.+)$/;
/** A project's load of a segment (or its share of a mapping) is recorded as `<name>#<app id>`. */
const projectLoadName = (name: string, appId: number) => `${name}#${Math.trunc(appId)}`;
const PROJECT_OF_LOAD = /#(\d+)$/;
/** `loaded_segments` rows of no one project: whole segments, and loads made before loads were per project. */
const NO_PROJECT = 0;

/** ClickHouse's words for the Export API's statements (JSON is stored as its text). */
const EXPORT_WORDS: ExportSqlWords = {
  hourOf: (column) => `intDiv(${column}, 3600000)`,
  textOf: (column) => column,
  bytesOf: (text) => `length(ifNull(${text}, ''))`,
  // GLOBAL: with shards the profiles are on the first one only.
  // The key as the events' (Nullable); aliases other than the columns: 18.16 resolves an alias inside its own expression.
  profileBytesJoin: (appId) => `GLOBAL ANY LEFT JOIN (SELECT toNullable(uid) AS svc_id, bytes AS profile_bytes FROM (SELECT svc_id AS uid, length(argMax(properties, version)) AS bytes
    FROM profiles WHERE app_id = ${Math.trunc(appId)} GROUP BY uid HAVING argMax(deleted, version) = 0)) USING (svc_id)`,
};

export class ClickHouseEngine extends SharedEntityEngine implements Engine, UserData, StreamedEvents, CohortMembers, ExportedEvents {
  private queue: Promise<unknown> = Promise.resolve();
  readonly journalLine = journalLine;
  protected readonly entities: SharedEntities;
  /** Cohort memberships and the user mapping mirror, as reporting reads them. */
  private readonly reporting: ReportingRows;
  /** Users' active hours and first events, kept as events load (user-activity.ts). */
  private readonly activity: UserActivity;
  /** Users per local day of the zones questions were asked in, kept as events load (local-days.ts). */
  private readonly localDays: LocalDays;

  private constructor(
    private readonly store: ClickHouseEvents,
    readonly sql: SqlSession,
    protected identities: Identities,
    /** Segments with rows written but not recorded as loaded (a load cut short in this process). */
    private readonly torn: Set<string>,
    /** Shared by every process loading into this database (see loadSegment). */
    private readonly loadLock: LoadLock,
    /** Names this process's journal apart from the others' (their segment names can be equal). */
    private readonly journalId: string,
    private readonly loadChunkLines: number,
    private readonly insertIdWindowMs: number,
    private readonly mutationTimeLimitMs: number,
    log: (message: string) => void,
  ) {
    super();
    this.entities = new SharedEntities(sql);
    this.reporting = new ReportingRows(store, mutationTimeLimitMs);
    this.localDays = new LocalDays(store, (appId, work) => this.serial(() => this.loadLock.hold({ appIds: [appId] }, work)), mutationTimeLimitMs, log);
    this.activity = new UserActivity(store, mutationTimeLimitMs, this.localDays);
    this.clocks = new EngineClocks(sql);
  }

  /** svc_ids and ingest_seqs, drawn by every process loading into the database. */
  private readonly clocks: EngineClocks;
  /** Per project, the ingest_seq of the last load (its own, or another process's) whose identities this process has. */
  private readonly caughtUp = new Map<number, number>();

  static async open(options: ClickHouseOptions, sql: SqlSession, { loadLock = inProcessLoadLock(), journalId = '' }: SharedLoading = {}): Promise<ClickHouseEngine> {
    // Under the setup lock: processes opening at once would both run a migration step (a
    // second ADD COLUMN fails), and a mapping another process writes right now is not reconciled.
    const engine = await loadLock.hold({ appIds: [], setup: true }, async () => {
      const engine = new ClickHouseEngine(await ClickHouseEvents.open(options), sql, new Identities(1), new Set(), loadLock, journalId, options.loadChunkLines ?? LOAD_CHUNK_LINES, options.insertIdWindowMs ?? DEFAULT_INSERT_ID_WINDOW_MS, options.mutationTimeLimitMs ?? MUTATION_TIME_LIMIT_MS, options.log ?? ((message) => console.error(message)));
      await engine.readIdentities();
      await engine.reporting.reconcileUserMappings(await engine.entities.allUserMappings());
      return engine;
    });
    await engine.removeTornLoads();
    return engine;
  }

  /**
   * Deletes the rows of every load cut short (by a crash of an earlier process), each under its
   * project's lock: a load of that project running right now in another process is not torn.
   */
  private async removeTornLoads(): Promise<void> {
    const written = SEGMENT_TABLES.map((table) => `SELECT DISTINCT segment FROM ${table} WHERE segment != ''`).join(' UNION ALL ');
    const torn = await this.store.query(`SELECT DISTINCT segment FROM (${written}) WHERE segment NOT IN (SELECT name FROM loaded_segments)`);
    for (const { segment } of torn) {
      const project = PROJECT_OF_LOAD.exec(segment as string);
      // A segment loaded whole (before loads were per project) may hold rows of any project.
      const scope = project ? { appIds: [Number(project[1])] } : { appIds: (await this.store.query('SELECT DISTINCT app_id FROM events')).map((r) => Number(r.app_id)), setup: true };
      await this.loadLock.hold(scope, async () => {
        if (!(await this.isRecorded(segment as string))) await this.removeSegment(segment as string, scope.appIds);
      });
    }
  }

  /**
   * Removes a torn load's rows, after giving rows it re-pointed to a user it created their own
   * ids back; the projects' (`appIds`) activity is then that of their events left.
   */
  private async removeSegment(name: string, appIds: readonly number[]): Promise<void> {
    await revertTornMerges(this.store, (table, mutation) => this.mutate(table, mutation), name);
    for (const table of SEGMENT_TABLES) await this.mutate(table, `DELETE WHERE segment = ${literal(name)}`);
    await this.activity.rebuild(appIds);
  }

  /** The identity rows `where` selects, devices in the order they were written. */
  private async identityRows(where: string): Promise<IdentityRows> {
    const read = (sql: string) => this.store.query(sql);
    return {
      users: (await read(`SELECT app_id, user_id, svc_id FROM identity_users ${where}`)).map((r) => ({ appId: Number(r.app_id), userId: r.user_id as string, svcId: Number(r.svc_id) })),
      devices: (await read(`SELECT app_id, device_id, svc_id, owner FROM identity_devices ${where} ORDER BY version`)).map((r) => ({
        appId: Number(r.app_id),
        deviceId: r.device_id as string,
        svcId: Number(r.svc_id),
        owner: (r.owner as string | null) ?? null,
      })),
      merges: (await read(`SELECT from_svc, to_svc FROM svc_merges ${where}`)).map((r) => ({ from: Number(r.from_svc), to: Number(r.to_svc) })),
    };
  }

  /**
   * The identities of every recorded load (a load of another process in progress is not), and
   * how far each project's are; the clocks raised past every number stored.
   */
  private async readIdentities(): Promise<void> {
    const read = (sql: string) => this.store.query(sql);
    for (const row of await read(`SELECT app_id, max(last_ingest_seq) AS seq FROM loaded_segments WHERE app_id != ${NO_PROJECT} GROUP BY app_id`)) this.caughtUp.set(Number(row.app_id), Number(row.seq));
    // Loads recorded after the query above are read here and again by the next catch-up, which changes nothing.
    this.identities = Identities.from(await this.identityRows("WHERE segment IN (SELECT name FROM loaded_segments) OR segment = ''"), 1);
    const [last] = await read(
      'SELECT (SELECT max(last_ingest_seq) FROM loaded_segments) AS recorded, (SELECT max(ingest_seq) FROM events) AS ingest_seq, (SELECT max(svc_id) FROM (SELECT svc_id FROM identity_users UNION ALL SELECT svc_id FROM identity_devices)) AS svc_id',
    );
    await this.clocks.atLeast('svc_id', Number(last!.svc_id) + 1);
    await this.clocks.atLeast('ingest_seq', Math.max(Number(last!.recorded), Number(last!.ingest_seq)) + 1);
  }

  /** One operation at a time: loads, scrubs and mappings all change the identities. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private insert(table: string, values: Row[]): Promise<unknown> {
    return insertRows(this.store, table, values);
  }

  private mutate(table: string, mutation: string): Promise<void> {
    return mutate(this.store, table, mutation, this.mutationTimeLimitMs);
  }

  /** A journal segment's name as recorded: journals of different processes name theirs alike. */
  private recorded(name: string): string {
    return this.journalId === '' ? name : `${this.journalId}/${name}`;
  }

  private async isRecorded(recordedName: string): Promise<boolean> {
    const [row] = await this.store.query(`SELECT count() AS n FROM loaded_segments WHERE name = ${literal(recordedName)}`);
    return Number(row!.n) > 0;
  }

  isLoaded(name: string): Promise<boolean> {
    return this.isRecorded(this.recorded(name));
  }

  /**
   * Catches up on what other processes loaded of these projects since this one's last load:
   * a project's loads take turns under its lock, so theirs are the loads recorded past this
   * process's ingest_seq of the project. Their identity rows join the identities. On replicas,
   * the one in use first fetches what the others loaded through other replicas.
   */
  private async catchUp(appIds: readonly number[]): Promise<void> {
    await this.store.fetchOtherReplicas();
    const past = appIds.map((appId) => `(app_id = ${Math.trunc(appId)} AND last_ingest_seq > ${Math.trunc(this.caughtUp.get(appId) ?? 0)})`).join(' OR ');
    const loaded = await this.store.query(`SELECT name, app_id, last_ingest_seq FROM loaded_segments WHERE ${past} ORDER BY last_ingest_seq`);
    if (loaded.length === 0) return;
    this.identities.apply(await this.identityRows(`WHERE segment IN (${loaded.map((row) => literal(row.name as string)).join(', ')})`));
    for (const row of loaded) {
      this.caughtUp.set(Number(row.app_id), Number(row.last_ingest_seq));
      const scrub = SCRUB_RECORD.exec(row.name as string);
      if (scrub) this.identities.forget(Number(scrub[1]), new Set((await this.entities.doomed(Number(scrub[1]), scrub[2]!)).map((e) => e.svcId)));
    }
  }

  /** Records a change of a project's identities made outside a segment (see MAPPING_RECORD); its ingest_seq. */
  private async recordChange(name: string, appId: number): Promise<number> {
    const version = await this.clocks.take('ingest_seq', 1);
    await this.insert('loaded_segments', [{ name, app_id: appId, last_ingest_seq: version, loaded_at: Date.now() }]);
    return version;
  }

  /**
   * Loads the segment one project at a time, each under its project's lock: loads of a project
   * take turns across processes, each first catching up on the others' identities of it and
   * dropping the repeats they stored. The segment is scanned once for all of them.
   */
  loadSegment(path: string, name: string): Promise<void> {
    return this.serial(async () => {
      const recorded = this.recorded(name);
      if (await this.isRecorded(recorded)) return;
      const lines = new SegmentLines(await readFile(path));
      const scan = await scanSegment(lines);
      for (const [appId, loading] of linesByProject(scan)) {
        await this.loadLock.hold({ appIds: [appId] }, () => this.loadProject(lines, scan, loading, appId, projectLoadName(recorded, appId)));
      }
      await this.insert('loaded_segments', [{ name: recorded, app_id: NO_PROJECT, last_ingest_seq: 0, loaded_at: Date.now() }]);
    });
  }

  /**
   * Loads the project's lines of a segment (`loading`) under the load's `name`: the scan
   * resolved every identity first (svc_ids are canonical only once the whole segment's merges
   * are known), the insert writes the lines' bytes a chunk at a time into the one INSERT.
   */
  private async loadProject(lines: SegmentLines, scan: SegmentScan, loading: Uint8Array, appId: number, name: string): Promise<void> {
    if (await this.isRecorded(name)) return;
    if (this.torn.has(name)) await this.removeSegment(name, [appId]);
    this.torn.add(name);
    await this.catchUp([appId]);
    const kept = await withoutStoredRepeats(this.store, scan, loading, appId, this.insertIdWindowMs, this.journalId);
    let keptCount = 0;
    let newIdBound = 0;
    for (let index = 0; index < kept.length; index++) {
      keptCount += kept[index]!;
      if (kept[index] === 1 && scan.held[index] === 0) newIdBound++;
    }
    // At least one ingest_seq: the load's record needs one past the project's last.
    const seqs = Math.max(keptCount, 1);
    const firstSeq = await this.clocks.take('ingest_seq', seqs);
    // Each resolved line makes at most one new svc_id; the unused end goes back.
    const firstSvcId = newIdBound === 0 ? 1 : await this.clocks.take('svc_id', newIdBound);
    const batch = this.identities.begin(firstSvcId);
    const { plan, eventCount } = await planSegment(scan, kept, batch, firstSeq - 1);
    if (newIdBound > 0) await this.clocks.giveBack('svc_id', firstSvcId, newIdBound, batch.nextSvcId - firstSvcId);
    const version = firstSeq + seqs - 1;
    const holds: Row[] = [];
    for (const [index, line] of scan.whole) {
      if (kept[index] === 0) continue;
      if (line.held_attribution) {
        const { id, app_id, received_at, event } = line.held_attribution;
        holds.push({ id, app_id, received_at, event: JSON.stringify(event), released: 0, segment: name });
      } else if (line.released_attribution) holds.push({ id: line.released_attribution, app_id: 0, received_at: 0, event: '', released: 1, segment: name });
    }
    const profileEvents = [...scan.whole].filter(([index]) => isEvent(plan, index)).map(([index, line]) => resolvedEvent(line, plan, index));
    const changes = batch.changes();
    const merges = changes.merges;
    await this.persistIdentities(changes, name, version);
    await this.insert('held_attributions', holds);
    await applyUserProfiles(this.store, profileEvents, merges, name, version);
    await applyGroupProfiles(this.store, profileEvents, name, version);
    if (merges.length > 0) {
      const from = integers(merges.map((m) => m.from));
      const to = integers(merges.map((m) => m.to));
      for (const table of ['events', 'profile_versions']) {
        await this.mutate(table, `UPDATE svc_id = transform(svc_id, [${from}], [${to}], svc_id) WHERE svc_id IN (${from})`);
      }
      await this.activity.repoint(merges.map((m) => m.from), merges.map((m) => m.to));
    }
    const zones = await this.localDays.zones(appId);
    const loaded = zones.length > 0 ? new LoadedActivity(eventCount) : undefined;
    await this.store.insertRows(segmentRows(lines, plan, eventCount, this.loadChunkLines, name, loaded && ((svcId, time, eventType) => loaded.add(svcId, time, eventType))));
    if (loaded) await this.localDays.record(appId, zones, loaded);
    await this.insert('loaded_segments', [{ name, app_id: appId, last_ingest_seq: version, loaded_at: Date.now() }]);
    this.torn.delete(name);
    batch.commit();
    this.caughtUp.set(appId, version);
  }

  private async persistIdentities({ users, devices, merges }: IdentityRows, segment: string, version: number): Promise<void> {
    await this.insert('identity_users', users.map((u) => ({ app_id: u.appId, user_id: u.userId, svc_id: u.svcId, segment })));
    await this.insert('identity_devices', devices.map((d) => ({ app_id: d.appId, device_id: d.deviceId, svc_id: d.svcId, owner: d.owner, version, segment })));
    await this.insert('svc_merges', merges.map((m) => ({ from_svc: m.from, to_svc: m.to, segment })));
  }

  async *recentInsertIds(since: number): AsyncIterable<[number, string, number][]> {
    const sql = `SELECT app_id, insert_id, server_upload_time FROM events WHERE insert_id IS NOT NULL AND server_upload_time >= ${Math.trunc(since)} ORDER BY server_upload_time, ingest_seq`;
    for await (const rows of this.store.queryChunks(sql)) yield rows.map(insertIdOf);
  }

  async knownAdvertisingIds(since: number): Promise<KnownAdvertisingId[]> {
    const carriers = ADVERTISING_ID_FIELDS.map(
      (field) => `SELECT app_id, '${field}' AS field, assumeNotNull(${field}) AS value, user_id, device_id, server_upload_time, ingest_seq FROM events WHERE ${field} IS NOT NULL AND server_upload_time >= ${Math.trunc(since)}`,
    ).join(' UNION ALL ');
    // A tuple, not its Nullable members: aggregate functions skip NULL arguments.
    const rows = await this.store.query(`SELECT app_id, field, value, argMax(tuple(user_id, device_id, server_upload_time), ingest_seq) AS carrier FROM (${carriers}) GROUP BY app_id, field, value`);
    return rows.map((r) => {
      const [userId, deviceId, seenAt] = r.carrier as [string | null, string | null, number];
      return { app_id: Number(r.app_id), field: r.field as KnownAdvertisingId['field'], value: r.value as string, user_id: userId, device_id: deviceId, seen_at: Number(seenAt) };
    });
  }

  async heldAttributions(since: number): Promise<HeldAttribution[]> {
    const rows = await this.store.query(
      `SELECT id, app_id, received_at, event FROM held_attributions WHERE released = 0 AND received_at >= ${Math.trunc(since)}
       AND id NOT IN (SELECT id FROM held_attributions WHERE released = 1) ORDER BY received_at`,
    );
    return rows.map((r) => ({ id: r.id as string, app_id: Number(r.app_id), received_at: Number(r.received_at), event: JSON.parse(r.event as string) as Properties }));
  }

  events(appId: number): Promise<LoadedEvent[]> {
    return this.store.events(appId);
  }

  query(sql: string): Promise<Row[]> {
    return this.store.query(sql);
  }

  queryChunks(sql: string): AsyncIterable<Row[]> {
    return this.store.queryChunks(sql);
  }

  /** Plain funnels from each user's events read for the question (user-timelines.ts). */
  timelineFunnel(query: TimelineFunnelQuery): Promise<FunnelGroup[] | undefined> {
    return streamedFunnel(this.store, query);
  }

  /** Active and new users from the activity kept at load; the other counts are SQL. */
  timelineCounts(query: TimelineCountsQuery): Promise<TimelineCounts | undefined> {
    return this.activity.counts(query);
  }

  /** The local days of zones asked in, built in the background (local-days.ts). */
  timelinesBuilt(): Promise<void> {
    return this.localDays.builds();
  }

  /** No materialized columns: the dialect reads the properties' arrays. */
  materializeEventProperties(): Promise<void> {
    return Promise.resolve();
  }

  propertiesMaterialized(): Promise<void> {
    return Promise.resolve();
  }

  async userProfile(appId: number, userOrDeviceId: string): Promise<Properties | undefined> {
    // The user may have come through another process since this one last loaded (records are
    // written last, so no lock is needed to read complete ones).
    await this.serial(() => this.catchUp([appId]));
    const svcId = this.identities.svcIdOf(appId, userOrDeviceId);
    if (svcId === undefined) return undefined;
    return (await storedProfiles(this.store, new Set([svcId]))).get(svcId)?.properties;
  }

  async groupProfile(appId: number, group: GroupKey): Promise<Properties | undefined> {
    const [row] = await this.store.query(
      `SELECT argMax(properties, version) AS properties FROM group_profiles
       WHERE app_id = ${Math.trunc(appId)} AND group_type = ${literal(group.group_type)} AND group_value = ${literal(group.group_value)} GROUP BY app_id`,
    );
    return row ? (JSON.parse(row.properties as string) as Properties) : undefined;
  }

  /**
   * Under the setup lock too: a process opening meanwhile must not take the mirror of the
   * mappings, written after the shared store's, for behind (reconcileUserMappings).
   */
  applyUserMappings(appIds: number[], changes: UserMappingChange[]): Promise<void> {
    return this.serial(() => this.loadLock.hold({ appIds, setup: true }, async () => {
      await this.catchUp(appIds);
      // Each resolution makes at most one new svc_id.
      const newIdBound = appIds.length * changes.length * 2;
      const firstSvcId = newIdBound === 0 ? 1 : await this.clocks.take('svc_id', newIdBound);
      const batch = this.identities.begin(firstSvcId);
      const rows = userMappingRows(batch, appIds, changes);
      if (newIdBound > 0) await this.clocks.giveBack('svc_id', firstSvcId, newIdBound, batch.nextSvcId - firstSvcId);
      const { users, devices } = batch.changes();
      const name = `${MAPPING_RECORD}${randomUUID()}`;
      const versions = new Map<number, number>();
      for (const appId of new Set(appIds)) {
        const projectName = projectLoadName(name, appId);
        // A mapping resolves user ids alone: it merges no device, and its rows are each of one project.
        const version = await this.clocks.take('ingest_seq', 1);
        await this.persistIdentities({ users: users.filter((u) => u.appId === appId), devices: devices.filter((d) => d.appId === appId), merges: [] }, projectName, version);
        await this.insert('loaded_segments', [{ name: projectName, app_id: appId, last_ingest_seq: version, loaded_at: Date.now() }]);
        versions.set(appId, version);
      }
      await this.entities.applyUserMappings(rows);
      await this.reporting.mirrorUserMappings(rows);
      batch.commit();
      for (const [appId, version] of versions) this.caughtUp.set(appId, version);
    }));
  }

  async svcIdsWithData(appId: number, svcIds: number[]): Promise<Set<number>> {
    if (svcIds.length === 0) return new Set();
    const rows = await this.store.query(`SELECT DISTINCT svc_id FROM events WHERE app_id = ${Math.trunc(appId)} AND svc_id IN (${integers(svcIds)})`);
    return new Set(rows.map((r) => Number(r.svc_id)));
  }

  /** The devices of these users (their own or joined to them), by their latest rows. */
  private async doomedDevices(appId: number, svcIds: number[]): Promise<string[]> {
    if (svcIds.length === 0) return [];
    const project = `app_id = ${Math.trunc(appId)}`;
    const list = integers(svcIds);
    // The owner in a tuple: argMax skips NULL arguments.
    const rows = await this.store.query(
      `SELECT device_id FROM (SELECT device_id, argMax(svc_id, version) AS svc_id, tupleElement(argMax(tuple(owner), version), 1) AS owner FROM identity_devices WHERE ${project} GROUP BY device_id)
       WHERE svc_id IN (${list}) OR owner IN (SELECT user_id FROM identity_users WHERE ${project} AND svc_id IN (${list}))`,
    );
    return rows.map((r) => r.device_id as string);
  }

  async devicesOfDeletionJob(appId: number, day: string): Promise<string[]> {
    return this.doomedDevices(appId, (await this.entities.doomed(appId, day)).map((e) => e.svcId));
  }

  /**
   * Deletes the users' rows by mutation (waited for), devices first, then records the scrub
   * in the shared store: a crash in between leaves the job due, and the scrub runs again.
   */
  scrubDeletionJob(appId: number, day: string, today: string): Promise<void> {
    // Under the load lock: another process's load of these users' events must not interleave.
    return this.serial(() => this.loadLock.hold({ appIds: [appId] }, async () => {
      await this.catchUp([appId]);
      // Every process runs the due jobs; the first one scrubs, the others find it done.
      if ((await this.entities.deletionJobs(appId, day, day))[0]?.scrubbedOn) return;
      const svcIds = (await this.entities.doomed(appId, day)).map((e) => e.svcId);
      if (svcIds.length > 0) {
        const condition = `app_id = ${Math.trunc(appId)} AND svc_id IN (${integers(svcIds)})`;
        // Devices that belonged to a deleted user go too (every row of each): their later events start a new user.
        const devices = await this.doomedDevices(appId, svcIds);
        if (devices.length > 0) await this.mutate('identity_devices', `DELETE WHERE app_id = ${Math.trunc(appId)} AND device_id IN (${devices.map(literal).join(', ')})`);
        for (const table of ['events', 'profiles', 'profile_versions', 'identity_users']) await this.mutate(table, `DELETE WHERE ${condition}`);
        await this.reporting.scrub(appId, svcIds);
        await this.activity.remove(appId, svcIds);
      }
      await this.entities.recordScrub(appId, day, svcIds, today);
      this.identities.forget(appId, new Set(svcIds));
      this.caughtUp.set(appId, await this.recordChange(`scrub:${Math.trunc(appId)}:${day}`, appId));
    }));
  }

  async profileProperties(appId: number, svcIds: readonly number[]): Promise<Map<number, Properties>> {
    const properties = new Map<number, Properties>();
    for (const [svcId, profile] of await storedProfiles(this.store, new Set(svcIds))) if (profile.appId === appId) properties.set(svcId, profile.properties);
    return properties;
  }

  /** argMax skips NULL values, as DuckDB's arg_max does: the latest event that has one. */
  async latestEventValues(appId: number, svcIds: readonly number[], columns: ReadonlyMap<string, string>): Promise<Map<number, Map<string, unknown>>> {
    if (svcIds.length === 0) return new Map();
    const names = [...columns.keys()];
    const selected = [...columns.values()].map((column, i) => `argMax(${quoted(column)}, time) AS v${i}`).join(', ');
    const rows = await this.store.query(`SELECT svc_id, ${selected} FROM events WHERE app_id = ${Math.trunc(appId)} AND svc_id IN (${integers(svcIds)}) GROUP BY svc_id`);
    return new Map(rows.map((r) => [Number(r.svc_id), new Map(names.map((name, i) => [name, r[`v${i}`]]))]));
  }

  /**
   * Of the project's recorded loads (and those made before loads were per project): its loads
   * are recorded in the order of their ingest_seqs, so every event of the project up to it is loaded.
   */
  async loadedIngestSeq(appId: number): Promise<number> {
    const [row] = await this.store.query(`SELECT max(last_ingest_seq) AS last FROM loaded_segments WHERE app_id IN (${Math.trunc(appId)}, ${NO_PROJECT})`);
    return Number(row?.last ?? 0);
  }

  async streamedEvents(query: StreamedEventsQuery): Promise<{ ingestSeq: number; serverUploadTime: number }[]> {
    const types = query.eventTypes === undefined ? '' : query.eventTypes.length === 0 ? ' AND 0' : ` AND event_type IN (${query.eventTypes.map(literal).join(', ')})`;
    const rows = await this.store.query(
      `SELECT ingest_seq, server_upload_time FROM events
       WHERE app_id = ${Math.trunc(query.appId)} AND ingest_seq > ${Math.trunc(query.afterSeq)} AND ingest_seq <= ${Math.trunc(query.untilSeq)}
       AND svc_id IS NOT NULL AND server_upload_time >= ${Math.trunc(query.since)}${types}
       AND segment GLOBAL IN (SELECT name FROM loaded_segments WHERE app_id IN (${Math.trunc(query.appId)}, ${NO_PROJECT}))
       ORDER BY ingest_seq LIMIT ${Math.trunc(query.limit)}`,
    );
    return rows.map((r) => ({ ingestSeq: Number(r.ingest_seq), serverUploadTime: Number(r.server_upload_time) }));
  }

  async exportHours(appId: number, fromMs: number, toMs: number): Promise<ExportHourSummary[]> {
    return (await this.store.query(exportHoursSql(EXPORT_WORDS, appId, fromMs, toMs))).map(hourSummary);
  }

  /** The lines are written here, in the engine's process, from the rows as they arrive and the histories of the range's users. */
  async *exportLines(appId: number, fromMs: number, toMs: number): AsyncIterable<string> {
    const users = await exportedUsers(this.store, appId, fromMs, toMs);
    for await (const rows of this.store.queryChunks(exportRowsSql(EXPORT_WORDS, appId, fromMs, toMs, USER_STATE_EXTRA_COLUMNS))) {
      if (rows.length > 0) yield linesText(rows.map((row) => withUserAtEvent(row, users)));
    }
  }

  /** The events with their JSON columns parsed and booleans as booleans (DuckDB's `to_json(e)`). */
  async eventsBySeq(ingestSeqs: readonly number[]): Promise<Row[]> {
    if (ingestSeqs.length === 0) return [];
    const columns = [...EVENT_FIELDS, 'svc_id', 'ingest_seq'];
    const rows = await this.store.query(`SELECT ${columns.map(quoted).join(', ')} FROM events WHERE ingest_seq IN (${integers(ingestSeqs)}) ORDER BY ingest_seq`);
    for (const row of rows) {
      for (const [field, type] of Object.entries(EVENT_COLUMNS)) {
        if (type === 'JSON' && typeof row[field] === 'string') row[field] = JSON.parse(row[field] as string);
        if (type === 'BOOLEAN') row[field] = row[field] === 1;
      }
    }
    return rows;
  }

  close(): Promise<void> {
    return this.serial(() => this.store.close());
  }

  replaceCohortMembers(appId: number, cohortId: string, svcIds: readonly number[]): Promise<void> {
    return this.serial(async () => this.reporting.writeCohortMembers(appId, cohortId, new Set(await this.reporting.cohortMembers(appId, cohortId)), new Set(svcIds)));
  }

  changeCohortMembers(appId: number, cohortId: string, changes: readonly CohortMembershipChange[]): Promise<void> {
    return this.serial(async () => {
      const before = new Set(await this.reporting.cohortMembers(appId, cohortId));
      const after = new Set(before);
      for (const { add, svcIds } of changes) for (const svcId of svcIds) (add ? after.add(svcId) : after.delete(svcId));
      await this.reporting.writeCohortMembers(appId, cohortId, before, after);
    });
  }

  cohortMembers(appId: number, cohortId: string): Promise<number[]> {
    return this.serial(() => this.reporting.cohortMembers(appId, cohortId));
  }

  cohortSizes(appId: number): Promise<Map<string, number>> {
    return this.serial(() => this.reporting.cohortSizes(appId));
  }
}
