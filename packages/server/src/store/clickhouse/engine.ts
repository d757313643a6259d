// The ClickHouse engine: the events, identities and profiles in ClickHouse 18.16, the other
// entities in a shared SQL store (../shared-entities.ts). Identity resolution and profile
// operations run in JS as in DuckDB, over the identities read back at open.
//
// A segment's load, without transactions: every row it writes carries the segment's name;
// its events go in one INSERT, and a row in `loaded_segments`, written last, records the
// load as done (`isLoaded`). A load cut short (a crash, or an error on the way) leaves rows
// without that record; they are deleted by mutation before the segment loads again (at open,
// or on the retry in the same process), so a segment never counts twice. One INSERT alone
// is not atomic enough: 18.16 writes one part per month partition (and splits blocks at
// max_insert_block_size rows), each part committed on its own.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DEFAULT_INSERT_ID_WINDOW_MS } from '../../model/events.js';
import { Identities, type IdentityBatch, type IdentityRows } from '../identity.js';
import { EVENT_COLUMNS, journalLine } from '../journal-line.js';
import { inProcessLoadLock, type LoadLock } from '../load-lock.js';
import type { Properties } from '../profiles.js';
import { SharedEntities, SharedEntityEngine, userMappingRows } from '../shared-entities.js';
import { ADVERTISING_ID_FIELDS, insertIdOf, type CohortMembers, type CohortMembershipChange, type Engine, type GroupKey, type HeldAttribution, type KnownAdvertisingId, type LoadedEvent, type SqlSession, type StreamedEvents, type StreamedEventsQuery, type UserData, type UserMappingChange, type ExportedEvents, type ExportHourSummary } from '../types.js';
import { exportHoursSql, exportRowsSql, type ExportSqlWords, hourSummary, linesText } from '../exported-events.js';
import { type ClickHouseOptions, ClickHouseEvents } from './events.js';
import { applyGroupProfiles, applyUserProfiles, storedProfiles } from './profiles.js';
import { ReportingRows } from './reporting-rows.js';
import { isEvent, LOAD_CHUNK_LINES, planSegment, resolvedChunks, resolvedEvent, scanSegment, SegmentLines } from './segment-lines.js';
import { insertRows, integers, literal, mutate, MUTATION_TIME_LIMIT_MS, quoted } from './statements.js';
import { withoutStoredRepeats } from './stored-repeats.js';
import { SEGMENT_TABLES } from './tables.js';

type Row = Record<string, unknown>;
/** How this process loads next to others on the same database (defaults: it is the only one). */
export interface SharedLoading {
  /** Held by every load (and by open), across all processes loading into the database. */
  loadLock?: LoadLock;
  /** A name of this process's journal, unique among the processes and kept across restarts. */
  journalId?: string;
}

const EVENT_FIELDS = Object.keys(EVENT_COLUMNS);
/**
 * Changes of identities outside journal segments are recorded in `loaded_segments` too, one
 * ingest_seq past the last (left unused), so other processes catch up on them in order: the
 * rows of a mapping carry its record's name; a scrub's record names the deletion job.
 */
const MAPPING_RECORD = 'mappings:';
const SCRUB_RECORD = /^scrub:(\d+):(.+)$/;

/** ClickHouse's words for the Export API's statements (JSON is stored as its text). */
const EXPORT_WORDS: ExportSqlWords = {
  hourOf: (column) => `intDiv(${column}, 3600000)`,
  textOf: (column) => column,
  bytesOf: (text) => `length(ifNull(${text}, ''))`,
};

export class ClickHouseEngine extends SharedEntityEngine implements Engine, UserData, StreamedEvents, CohortMembers, ExportedEvents {
  private queue: Promise<unknown> = Promise.resolve();
  readonly journalLine = journalLine;
  protected readonly entities: SharedEntities;
  /** Cohort memberships and the user mapping mirror, as reporting reads them. */
  private readonly reporting: ReportingRows;

  private constructor(
    private readonly store: ClickHouseEvents,
    readonly sql: SqlSession,
    protected identities: Identities,
    /** The `ingest_seq` the last loaded segment ended at. */
    private lastIngestSeq: number,
    /** Segments with rows written but not recorded as loaded (a load cut short in this process). */
    private readonly torn: Set<string>,
    /** Shared by every process loading into this database (see loadSegment). */
    private readonly loadLock: LoadLock,
    /** Names this process's journal apart from the others' (their segment names can be equal). */
    private readonly journalId: string,
    private readonly loadChunkLines: number,
    private readonly insertIdWindowMs: number,
    private readonly mutationTimeLimitMs: number,
  ) {
    super();
    this.entities = new SharedEntities(sql);
    this.reporting = new ReportingRows(store, mutationTimeLimitMs);
  }

  static async open(options: ClickHouseOptions, sql: SqlSession, { loadLock = inProcessLoadLock(), journalId = '' }: SharedLoading = {}): Promise<ClickHouseEngine> {
    // Under the lock: processes opening at once would both run a migration step (a second
    // ADD COLUMN fails), and a segment another process is loading right now is not torn.
    return loadLock.hold(async () => {
      const engine = new ClickHouseEngine(await ClickHouseEvents.open(options), sql, new Identities(1), 0, new Set(), loadLock, journalId, options.loadChunkLines ?? LOAD_CHUNK_LINES, options.insertIdWindowMs ?? DEFAULT_INSERT_ID_WINDOW_MS, options.mutationTimeLimitMs ?? MUTATION_TIME_LIMIT_MS);
      await engine.removeTornSegments();
      await engine.readIdentities();
      await engine.reporting.reconcileUserMappings(await engine.entities.allUserMappings());
      return engine;
    });
  }

  /** Deletes the rows of every segment whose load was cut short (by a crash of an earlier process). */
  private async removeTornSegments(): Promise<void> {
    const written = SEGMENT_TABLES.map((table) => `SELECT DISTINCT segment FROM ${table} WHERE segment != ''`).join(' UNION ALL ');
    const torn = await this.store.query(`SELECT DISTINCT segment FROM (${written}) WHERE segment NOT IN (SELECT name FROM loaded_segments)`);
    for (const { segment } of torn) await this.removeSegment(segment as string);
  }

  private async removeSegment(name: string): Promise<void> {
    for (const table of SEGMENT_TABLES) await this.mutate(table, `DELETE WHERE segment = ${literal(name)}`);
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

  private async readIdentities(): Promise<void> {
    const read = (sql: string) => this.store.query(sql);
    const rows = await this.identityRows('');
    const [last] = await read(
      'SELECT (SELECT max(last_ingest_seq) FROM loaded_segments) AS ingest_seq, (SELECT max(svc_id) FROM (SELECT svc_id FROM identity_users UNION ALL SELECT svc_id FROM identity_devices)) AS svc_id',
    );
    this.identities = Identities.from(rows, Number(last!.svc_id) + 1);
    this.lastIngestSeq = Number(last!.ingest_seq);
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
   * Catches up on what other processes loaded since this one's last load: loads take turns
   * under the load lock, so theirs are the segments recorded past this process's `ingest_seq`.
   * Their identity rows join the identities, with the svc_ids they allocated and the
   * ingestion order they reached.
   */
  private async catchUp(): Promise<void> {
    const loaded = await this.store.query(`SELECT name, last_ingest_seq FROM loaded_segments WHERE last_ingest_seq > ${Math.trunc(this.lastIngestSeq)}`);
    if (loaded.length === 0) return;
    const rows = await this.identityRows(`WHERE segment IN (${loaded.map((row) => literal(row.name as string)).join(', ')})`);
    this.identities.apply(rows);
    for (const { svcId } of [...rows.users, ...rows.devices]) if (svcId >= this.identities.nextSvcId) this.identities.nextSvcId = svcId + 1;
    for (const row of loaded) {
      this.lastIngestSeq = Math.max(this.lastIngestSeq, Number(row.last_ingest_seq));
      const scrub = SCRUB_RECORD.exec(row.name as string);
      if (scrub) this.identities.forget(Number(scrub[1]), new Set((await this.entities.doomed(Number(scrub[1]), scrub[2]!)).map((e) => e.svcId)));
    }
  }

  /** Records a change of identities made outside a segment (see MAPPING_RECORD); its ingest_seq. */
  private async recordChange(name: string): Promise<number> {
    const version = this.lastIngestSeq + 1;
    await this.insert('loaded_segments', [{ name, last_ingest_seq: version, loaded_at: Date.now() }]);
    return version;
  }

  /**
   * Loads of all processes sharing the database take turns under the load lock; each first
   * catches up on the others' identities and ingestion order and drops the repeats they stored.
   */
  loadSegment(path: string, name: string): Promise<void> {
    return this.serial(() => this.loadLock.hold(() => this.loadLocked(path, this.recorded(name))));
  }

  /**
   * Loads the segment at `path` under its recorded `name`, in two passes over its lines: the
   * first resolves every identity (svc_ids are canonical only once the whole segment's merges
   * are known), the second parses the lines again a chunk at a time into the one INSERT.
   */
  private async loadLocked(path: string, name: string): Promise<void> {
    if (await this.isRecorded(name)) return;
    if (this.torn.has(name)) await this.removeSegment(name);
    this.torn.add(name);
    await this.catchUp();
    const lines = new SegmentLines(await readFile(path));
    const scan = await scanSegment(lines);
    const kept = await withoutStoredRepeats(this.store, scan, this.insertIdWindowMs, this.journalId);
    const batch = this.identities.begin();
    const { plan, eventCount, version } = await planSegment(scan, kept, batch, this.lastIngestSeq);
    const holds: Row[] = [];
    for (const [index, line] of scan.whole) {
      if (kept[index] === 0) continue;
      if (line.held_attribution) {
        const { id, app_id, received_at, event } = line.held_attribution;
        holds.push({ id, app_id, received_at, event: JSON.stringify(event), released: 0, segment: name });
      } else if (line.released_attribution) holds.push({ id: line.released_attribution, app_id: 0, received_at: 0, event: '', released: 1, segment: name });
    }
    const profileEvents = [...scan.whole].filter(([index]) => isEvent(plan, index)).map(([index, line]) => resolvedEvent(line, plan, index));
    const merges = batch.changes().merges;
    await this.persistIdentities(batch, name, version);
    await this.insert('held_attributions', holds);
    await applyUserProfiles(this.store, profileEvents, merges, name, version);
    await applyGroupProfiles(this.store, profileEvents, name, version);
    if (merges.length > 0) {
      const from = integers(merges.map((m) => m.from));
      const to = integers(merges.map((m) => m.to));
      for (const table of ['events', 'profile_versions']) {
        await this.mutate(table, `UPDATE svc_id = transform(svc_id, [${from}], [${to}], svc_id) WHERE svc_id IN (${from})`);
      }
    }
    await this.store.insertChunks(resolvedChunks(lines, plan, this.loadChunkLines), eventCount, name);
    await this.insert('loaded_segments', [{ name, last_ingest_seq: version, loaded_at: Date.now() }]);
    this.torn.delete(name);
    batch.commit();
    this.lastIngestSeq = version;
  }

  private async persistIdentities(batch: IdentityBatch, segment: string, version: number): Promise<void> {
    const { users, devices, merges } = batch.changes();
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

  /** Not available: this engine keeps no timelines, its funnels are SQL. */
  timelineFunnel(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  /** Not available either: its counts are SQL. */
  timelineCounts(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  timelinesBuilt(): Promise<void> {
    return Promise.resolve();
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
    await this.serial(() => this.catchUp());
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

  applyUserMappings(appIds: number[], changes: UserMappingChange[]): Promise<void> {
    return this.serial(() => this.loadLock.hold(async () => {
      await this.catchUp();
      const batch = this.identities.begin();
      const rows = userMappingRows(batch, appIds, changes);
      const name = `${MAPPING_RECORD}${randomUUID()}`;
      await this.persistIdentities(batch, name, this.lastIngestSeq + 1);
      const version = await this.recordChange(name);
      await this.entities.applyUserMappings(rows);
      await this.reporting.mirrorUserMappings(rows);
      batch.commit();
      this.lastIngestSeq = version;
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
    return this.serial(() => this.loadLock.hold(async () => {
      await this.catchUp();
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
      }
      await this.entities.recordScrub(appId, day, svcIds, today);
      this.identities.forget(appId, new Set(svcIds));
      this.lastIngestSeq = await this.recordChange(`scrub:${Math.trunc(appId)}:${day}`);
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

  /** Of segments recorded as loaded: a load cut short never shows its events to the streamer. */
  async loadedIngestSeq(): Promise<number> {
    const [row] = await this.store.query('SELECT max(last_ingest_seq) AS last FROM loaded_segments');
    return Number(row?.last ?? 0);
  }

  async streamedEvents(query: StreamedEventsQuery): Promise<{ ingestSeq: number; serverUploadTime: number }[]> {
    const types = query.eventTypes === undefined ? '' : query.eventTypes.length === 0 ? ' AND 0' : ` AND event_type IN (${query.eventTypes.map(literal).join(', ')})`;
    const rows = await this.store.query(
      `SELECT ingest_seq, server_upload_time FROM events
       WHERE app_id = ${Math.trunc(query.appId)} AND ingest_seq > ${Math.trunc(query.afterSeq)} AND ingest_seq <= ${Math.trunc(query.untilSeq)}
       AND svc_id IS NOT NULL AND server_upload_time >= ${Math.trunc(query.since)}${types}
       ORDER BY ingest_seq LIMIT ${Math.trunc(query.limit)}`,
    );
    return rows.map((r) => ({ ingestSeq: Number(r.ingest_seq), serverUploadTime: Number(r.server_upload_time) }));
  }

  async exportHours(appId: number, fromMs: number, toMs: number): Promise<ExportHourSummary[]> {
    return (await this.store.query(exportHoursSql(EXPORT_WORDS, appId, fromMs, toMs))).map(hourSummary);
  }

  /** The lines are written here, in the engine's process, from the rows as they arrive. */
  async *exportLines(appId: number, fromMs: number, toMs: number): AsyncIterable<string> {
    for await (const rows of this.store.queryChunks(exportRowsSql(EXPORT_WORDS, appId, fromMs, toMs))) if (rows.length > 0) yield linesText(rows);
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
