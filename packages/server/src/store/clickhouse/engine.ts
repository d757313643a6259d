// The ClickHouse engine (issue 14): the events, identities and profiles in ClickHouse 18.16,
// the other entities in a shared SQL store (../shared-entities.ts). Identity resolution and profile
// operations run in JS as in DuckDB (src/ingest), over the identities read back at open.
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
import { Identities, type IdentityBatch, type IdentityRows } from '../identity.js';
import { foldProfiles, groupProfileKey, groupsOf, type Properties, updatedProfiles } from '../profiles.js';
import { DEFAULT_INSERT_ID_WINDOW_MS } from '../../model/events.js';
import { EVENT_COLUMNS, journalLine } from '../journal-line.js';
import { timeSlicer } from '../../shared/time-slice.js';
import { inProcessLoadLock, type LoadLock } from '../load-lock.js';
import { SharedEntities, SharedEntityEngine, type UserMappingRow, userMappingRows } from '../shared-entities.js';
import { ADVERTISING_ID_FIELDS, insertIdOf, type CohortMembers, type CohortMembershipChange, type Engine, type GroupKey, type HeldAttribution, type KnownAdvertisingId, type LoadedEvent, type SqlSession, type StoredEvent, type StreamedEvents, type StreamedEventsQuery, type UserData, type UserMappingChange } from '../types.js';
import { type ClickHouseOptions, ClickHouseEvents, type ResolvedEvent } from './events.js';
import { currentCohortMembers, SEGMENT_TABLES, splitProperties } from './tables.js';

type Row = Record<string, unknown>;
type Profile = { appId: number; properties: Properties; updatedAt: number };
/** How this process loads next to others on the same database (defaults: it is the only one). */
export interface SharedLoading {
  /** Held by every load (and by open), across all processes loading into the database. */
  loadLock?: LoadLock;
  /** A name of this process's journal, unique among the processes and kept across restarts. */
  journalId?: string;
}
type JournalLine = StoredEvent & { held_attribution?: HeldAttribution | null; released_attribution?: string | null };

/** A ClickHouse string literal. */
const literal = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const integers = (values: Iterable<number>) => [...values].map((value) => String(Math.trunc(value))).join(', ');
const EVENT_FIELDS = Object.keys(EVENT_COLUMNS);
/**
 * Changes of identities outside journal segments are recorded in `loaded_segments` too, one
 * ingest_seq past the last (left unused), so other processes catch up on them in order: the
 * rows of a mapping carry its record's name; a scrub's record names the deletion job.
 */
const MAPPING_RECORD = 'mappings:';
const SCRUB_RECORD = /^scrub:(\d+):(.+)$/;
const quoted = (column: string) => `\`${column.replace(/`/g, '')}\``;

/** A journal line as a record with every event field (the line leaves null fields out); filled in place, no copies. */
function parseLine(text: string): JournalLine {
  const line = JSON.parse(text) as Row;
  for (const field of EVENT_FIELDS) line[field] ??= null;
  return line as unknown as JournalLine;
}

/**
 * Lines of a segment parsed and encoded at a time while it loads (their objects are what a
 * load holds at once): a 64 MB segment's load peaked at +146 MB of heap with 2,000, +241 MB
 * with 5,000, in the same time (scripts/bench/engines/segment-memory.mjs).
 */
const LOAD_CHUNK_LINES = 2_000;
const NEWLINE = 0x0a;

/** A segment's non-empty lines, each a byte range of the file (read once, kept out of the JS heap). */
class SegmentLines {
  readonly count: number;
  private readonly starts: Float64Array;
  private readonly ends: Float64Array;

  constructor(private readonly bytes: Buffer) {
    let newlines = 0;
    for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) newlines++;
    this.starts = new Float64Array(newlines + 1);
    this.ends = new Float64Array(newlines + 1);
    let count = 0;
    for (let start = 0; start < bytes.length; ) {
      const newline = bytes.indexOf(NEWLINE, start);
      const end = newline === -1 ? bytes.length : newline;
      if (end > start) {
        this.starts[count] = start;
        this.ends[count++] = end;
      }
      start = end + 1;
    }
    this.count = count;
  }

  parse(index: number): JournalLine {
    return parseLine(this.bytes.toString('utf8', this.starts[index], this.ends[index]));
  }
}

/**
 * What the whole-segment steps (dedupe, identities, profiles, holds) need of each line, by
 * line index: columns of scalars, and whole only the few lines the profile and hold steps read.
 */
interface SegmentScan {
  appIds: Int32Array;
  uploadTimes: Float64Array;
  insertIds: (string | null)[];
  userIds: (string | null)[];
  deviceIds: (string | null)[];
  held: Uint8Array;
  /** Held and released attributions, `$identify` and `$groupidentify` events. */
  whole: Map<number, JournalLine>;
}

async function scanSegment(lines: SegmentLines): Promise<SegmentScan> {
  const slice = timeSlicer();
  const scan: SegmentScan = {
    appIds: new Int32Array(lines.count),
    uploadTimes: new Float64Array(lines.count),
    insertIds: new Array<string | null>(lines.count),
    userIds: new Array<string | null>(lines.count),
    deviceIds: new Array<string | null>(lines.count),
    held: new Uint8Array(lines.count),
    whole: new Map(),
  };
  for (let index = 0; index < lines.count; index++) {
    const line = lines.parse(index);
    scan.appIds[index] = line.app_id;
    scan.uploadTimes[index] = line.server_upload_time;
    scan.insertIds[index] = line.insert_id;
    scan.userIds[index] = line.user_id;
    scan.deviceIds[index] = line.device_id;
    scan.held[index] = line.held_attribution ? 1 : 0;
    if (line.held_attribution || line.released_attribution || line.event_type === '$identify' || line.event_type === '$groupidentify') scan.whole.set(index, line);
    await slice(index);
  }
  return scan;
}

/** Where each kept line goes, by line index: its ingest_seq (0: dropped as a repeat) and svc_id (NaN: none). */
interface SegmentPlan {
  ingestSeqs: Float64Array;
  svcIds: Float64Array;
  held: Uint8Array;
}

const isEvent = (plan: SegmentPlan, index: number) => plan.ingestSeqs[index] !== 0 && plan.held[index] === 0;

/** The line as the event inserted. */
function resolvedEvent(line: JournalLine, plan: SegmentPlan, index: number): ResolvedEvent {
  // The line itself becomes the event (the insert reads the event columns only).
  const event = line as JournalLine & ResolvedEvent;
  const svcId = plan.svcIds[index]!;
  event.svc_id = Number.isNaN(svcId) ? null : svcId;
  event.ingest_seq = plan.ingestSeqs[index]!;
  return event;
}

/** The segment's events a chunk of lines at a time, parsed again when the insert pulls them. */
async function* resolvedChunks(lines: SegmentLines, plan: SegmentPlan, chunkLines: number): AsyncGenerator<ResolvedEvent[]> {
  const slice = timeSlicer();
  for (let from = 0; from < lines.count; from += chunkLines) {
    const events: ResolvedEvent[] = [];
    for (let index = from; index < Math.min(lines.count, from + chunkLines); index++) {
      if (isEvent(plan, index)) events.push(resolvedEvent(lines.parse(index), plan, index));
      await slice(index);
    }
    yield events;
  }
}

/**
 * Mutations run in the background on 18.16 (no `mutations_sync`): polled until done. A
 * mutation that fails is retried by the server forever and blocks the later ones of its
 * table (18.16 can neither report nor kill it), so their SQL must be right.
 */
const MUTATION_POLL_MS = 20;

export class ClickHouseEngine extends SharedEntityEngine implements Engine, UserData, StreamedEvents, CohortMembers {
  private queue: Promise<unknown> = Promise.resolve();
  readonly journalLine = journalLine;
  protected readonly entities: SharedEntities;
  /** The last version given to a cohort membership or user mapping row. */
  private lastVersion = 0;

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
  ) {
    super();
    this.entities = new SharedEntities(sql);
  }

  static async open(options: ClickHouseOptions, sql: SqlSession, { loadLock = inProcessLoadLock(), journalId = '' }: SharedLoading = {}): Promise<ClickHouseEngine> {
    // Under the lock: processes opening at once would both run a migration step (seen: a
    // duplicate ADD COLUMN), and a segment another process is loading right now is not torn.
    return loadLock.hold(async () => {
      const engine = new ClickHouseEngine(await ClickHouseEvents.open(options), sql, new Identities(1), 0, new Set(), loadLock, journalId, options.loadChunkLines ?? LOAD_CHUNK_LINES, options.insertIdWindowMs ?? DEFAULT_INSERT_ID_WINDOW_MS);
      await engine.removeTornSegments();
      await engine.readIdentities();
      await engine.reconcileUserMappings();
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

  /** Runs a mutation and waits until every part has it applied. */
  private async mutate(table: string, mutation: string): Promise<void> {
    await this.store.client.command({ query: `ALTER TABLE ${table} ${mutation}` });
    for (;;) {
      const [pending] = await this.store.query(`SELECT count() AS n FROM system.mutations WHERE database = currentDatabase() AND table = ${literal(table)} AND is_done = 0`);
      if (Number(pending!.n) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, MUTATION_POLL_MS));
    }
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
    if (values.length === 0) return Promise.resolve();
    return this.store.client.insert({ table, values, format: 'JSONEachRow' });
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
   * Which lines are not events whose insert_id is stored within the dedupe window before
   * them (1: kept): repeats another process received (each process's own window drops those it sees).
   */
  private async withoutStoredRepeats(scan: SegmentScan): Promise<Uint8Array> {
    const keyOf = (appId: number, insertId: string) => `${appId}:${insertId}`;
    const kept = new Uint8Array(scan.held.length).fill(1);
    const candidates: number[] = [];
    for (let index = 0; index < kept.length; index++) if (scan.held[index] === 0 && scan.insertIds[index] !== null) candidates.push(index);
    if (candidates.length === 0) return kept;
    const since = candidates.reduce((oldest, index) => Math.min(oldest, scan.uploadTimes[index]!), Infinity) - this.insertIdWindowMs;
    const query = `SELECT app_id, insert_id, max(server_upload_time) AS stored_at FROM events
      WHERE server_upload_time >= ${Math.trunc(since)} AND app_id IN (${integers(new Set(candidates.map((index) => scan.appIds[index]!)))})
      AND insert_id IN (${candidates.map((index) => literal(scan.insertIds[index]!)).join(', ')}) GROUP BY app_id, insert_id`;
    // The ids are literals in the query: room for a whole segment's (the defaults stop at 256 KiB
    // of text and 50,000 syntax elements; a segment of 50,000 events exceeded the latter).
    const room = { max_query_size: String(query.length + 1024), max_ast_elements: String(candidates.length + 1024), max_expanded_ast_elements: String(Math.max(500_000, candidates.length + 1024)) };
    const result = await this.store.client.query({ query, format: 'JSONEachRow', clickhouse_settings: room });
    const stored = new Map<string, number>();
    for (const row of await result.json<Row>()) stored.set(keyOf(Number(row.app_id), row.insert_id as string), Number(row.stored_at));
    for (const index of candidates) {
      const storedAt = stored.get(keyOf(scan.appIds[index]!, scan.insertIds[index]!));
      if (storedAt !== undefined && storedAt >= scan.uploadTimes[index]! - this.insertIdWindowMs) kept[index] = 0;
    }
    return kept;
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
    const kept = await this.withoutStoredRepeats(scan);
    const batch = this.identities.begin();
    const { plan, eventCount, version } = await this.resolveIdentities(scan, kept, batch);
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
    await this.applyUserProfiles(profileEvents, merges, name, version);
    await this.applyGroupProfiles(profileEvents, name, version);
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

  /** The kept lines' ingest_seqs (held ones take theirs too) and canonical svc_ids; how many are events; the last ingest_seq. */
  private async resolveIdentities(scan: SegmentScan, kept: Uint8Array, batch: IdentityBatch): Promise<{ plan: SegmentPlan; eventCount: number; version: number }> {
    const slice = timeSlicer();
    const plan: SegmentPlan = { ingestSeqs: new Float64Array(kept.length), svcIds: new Float64Array(kept.length).fill(Number.NaN), held: scan.held };
    let version = this.lastIngestSeq;
    let eventCount = 0;
    for (let index = 0; index < kept.length; index++) {
      await slice(index);
      if (kept[index] === 0) continue;
      plan.ingestSeqs[index] = ++version;
      if (scan.held[index] === 1) continue;
      plan.svcIds[index] = batch.resolve(scan.appIds[index]!, scan.userIds[index] ?? null, scan.deviceIds[index] ?? null) ?? Number.NaN;
      eventCount++;
    }
    for (let index = 0; index < kept.length; index++) if (!Number.isNaN(plan.svcIds[index])) plan.svcIds[index] = batch.canonical(plan.svcIds[index]!);
    return { plan, eventCount, version };
  }

  private async persistIdentities(batch: IdentityBatch, segment: string, version: number): Promise<void> {
    const { users, devices, merges } = batch.changes();
    await this.insert('identity_users', users.map((u) => ({ app_id: u.appId, user_id: u.userId, svc_id: u.svcId, segment })));
    await this.insert('identity_devices', devices.map((d) => ({ app_id: d.appId, device_id: d.deviceId, svc_id: d.svcId, owner: d.owner, version, segment })));
    await this.insert('svc_merges', merges.map((m) => ({ from_svc: m.from, to_svc: m.to, segment })));
  }

  /** The latest stored profiles of these `svc_id`s (deleted ones left out). */
  private async storedProfiles(svcIds: Set<number>): Promise<Map<number, Profile>> {
    const profiles = new Map<number, Profile>();
    if (svcIds.size === 0) return profiles;
    const rows = await this.store.query(
      `SELECT app_id, svc_id, argMax(properties, version) AS properties, argMax(updated_at, version) AS updated_at, argMax(deleted, version) AS deleted
       FROM profiles WHERE svc_id IN (${integers(svcIds)}) GROUP BY app_id, svc_id`,
    );
    for (const row of rows) {
      if (Number(row.deleted) === 0) profiles.set(Number(row.svc_id), { appId: Number(row.app_id), properties: JSON.parse(row.properties as string) as Properties, updatedAt: Number(row.updated_at) });
    }
    return profiles;
  }

  /**
   * Merged devices' profiles move to their user (the user's own wins), then the segment's
   * `$identify` events apply in order: one profile version each, one current row per user.
   */
  private async applyUserProfiles(events: ResolvedEvent[], merges: { from: number; to: number }[], segment: string, version: number): Promise<void> {
    const identifies = events.filter((e) => e.event_type === '$identify' && e.user_properties !== null && !e.skip_user_properties_sync && e.svc_id !== null);
    const involved = new Set([...merges.flatMap((m) => [m.from, m.to]), ...identifies.map((e) => e.svc_id!)]);
    const profiles = await this.storedProfiles(involved);
    const changed = new Map<number, { appId: number; deleted: boolean }>();
    for (const { from, to } of merges) {
      const merged = profiles.get(from);
      if (!merged) continue;
      if (!profiles.has(to)) {
        profiles.set(to, merged);
        changed.set(to, { appId: merged.appId, deleted: false });
      }
      profiles.delete(from);
      changed.set(from, { appId: merged.appId, deleted: true });
    }
    const folded = foldProfiles(
      identifies.map((event) => ({ key: event.svc_id!, operations: event.user_properties!, time: event.time, event })),
      (svcId) => profiles.get(svcId)?.properties,
    );
    for (const [svcId, { properties, last }] of folded.profiles) {
      profiles.set(svcId, { appId: last.event.app_id, properties, updatedAt: last.time });
      changed.set(svcId, { appId: last.event.app_id, deleted: false });
    }
    const versions = folded.versions.map(({ update: { key, event }, properties }) => ({ app_id: event.app_id, svc_id: key, ingest_seq: event.ingest_seq, properties: JSON.stringify(properties), segment, ...this.splitVersion(properties) }));
    await this.insert('profile_versions', versions);
    await this.insert(
      'profiles',
      [...changed].map(([svcId, { appId, deleted }]) => {
        const profile = profiles.get(svcId);
        return { app_id: appId, svc_id: svcId, properties: deleted ? '{}' : JSON.stringify(profile!.properties), updated_at: profile?.updatedAt ?? 0, version, deleted: Number(deleted), segment };
      }),
    );
  }

  private async applyGroupProfiles(events: ResolvedEvent[], segment: string, version: number): Promise<void> {
    const groupEvents = events.filter((e) => e.event_type === '$groupidentify' && e.groups !== null && e.group_properties !== null);
    const updates = groupEvents.flatMap((event) => groupsOf(event.groups!).map((group) => ({ key: groupProfileKey(event.app_id, group), appId: event.app_id, group, operations: event.group_properties!, time: event.time })));
    if (updates.length === 0) return;
    const stored = await this.store.query(
      `SELECT app_id, group_type, group_value, argMax(properties, version) AS properties FROM group_profiles
       WHERE (app_id, group_type, group_value) IN (${updatedProfiles(updates).map((u) => `(${u.appId}, ${literal(u.group.group_type)}, ${literal(u.group.group_value)})`).join(', ')})
       GROUP BY app_id, group_type, group_value`,
    );
    const prior = new Map<string, Properties>();
    for (const row of stored) prior.set(groupProfileKey(Number(row.app_id), { group_type: row.group_type as string, group_value: row.group_value as string }), JSON.parse(row.properties as string) as Properties);
    const { profiles } = foldProfiles(updates, (key) => prior.get(key));
    await this.insert(
      'group_profiles',
      [...profiles.values()].map(({ properties, last }) => ({ app_id: last.appId, group_type: last.group.group_type, group_value: last.group.group_value, properties: JSON.stringify(properties), updated_at: last.time, version, segment })),
    );
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
    return (await this.storedProfiles(new Set([svcId]))).get(svcId)?.properties;
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
      await this.mirrorUserMappings(rows);
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
        await this.scrubReportingRows(appId, svcIds);
      }
      await this.entities.recordScrub(appId, day, svcIds, today);
      this.identities.forget(appId, new Set(svcIds));
      this.lastIngestSeq = await this.recordChange(`scrub:${Math.trunc(appId)}:${day}`);
    }));
  }

  async profileProperties(appId: number, svcIds: readonly number[]): Promise<Map<number, Properties>> {
    const properties = new Map<number, Properties>();
    for (const [svcId, profile] of await this.storedProfiles(new Set(svcIds))) if (profile.appId === appId) properties.set(svcId, profile.properties);
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

  /**
   * Versions of cohort membership and user mapping rows: microseconds of the clock, raised
   * above the last one given (one process writes them; see tables.ts).
   */
  private nextVersion(): number {
    this.lastVersion = Math.max(Date.now() * 1000, this.lastVersion + 1);
    return this.lastVersion;
  }

  /** A profile version's split columns (tables.ts). */
  private splitVersion(properties: Properties): { property_keys: string[]; property_values: string[] } {
    const [keys, values] = splitProperties(properties);
    return { property_keys: keys, property_values: values };
  }

  /** The mappings as reporting reads them (`entities` keeps the user ids): written after the shared store's. */
  private async mirrorUserMappings(rows: readonly (readonly [appId: number, from: number, to: number | null, ...unknown[]])[]): Promise<void> {
    const version = this.nextVersion();
    await this.insert('user_mappings', rows.map(([appId, from, to]) => ({ app_id: appId, from_svc: from, to_svc: to, version })));
  }

  /**
   * The mirror takes the shared store's mappings where they differ: a process that ended
   * between the two writes of a mapping (or of a scrub) left the mirror behind.
   */
  private async reconcileUserMappings(): Promise<void> {
    const shared = new Map<string, number>();
    for (const [appId, from, to] of await this.entities.allUserMappings()) shared.set(`${appId}:${from}`, to);
    const mirrored = await this.store.query('SELECT app_id, from_svc, tupleElement(argMax(tuple(to_svc), version), 1) AS to_svc FROM user_mappings GROUP BY app_id, from_svc');
    const stale: [number, number, number | null][] = [];
    for (const row of mirrored) {
      const key = `${row.app_id}:${row.from_svc}`;
      const to = row.to_svc === null ? null : Number(row.to_svc);
      if ((shared.get(key) ?? null) !== to) stale.push([Number(row.app_id), Number(row.from_svc), shared.get(key) ?? null]);
      shared.delete(key);
    }
    for (const [key, to] of shared) {
      const [appId, from] = key.split(':').map(Number) as [number, number];
      stale.push([appId, from, to]);
    }
    if (stale.length > 0) await this.mirrorUserMappings(stale);
  }

  /** The deleted users leave their cohorts and mappings (both directions). */
  private async scrubReportingRows(appId: number, svcIds: number[]): Promise<void> {
    const project = `app_id = ${Math.trunc(appId)}`;
    const list = integers(svcIds);
    await this.mutate('cohort_members', `DELETE WHERE ${project} AND svc_id IN (${list})`);
    await this.mutate('user_mappings', `DELETE WHERE ${project} AND (from_svc IN (${list}) OR to_svc IN (${list}))`);
  }

  /** One INSERT (one block, one part: all or nothing) of the rows that take the members from `before` to `after`. */
  private async writeCohortMembers(appId: number, cohortId: string, before: Set<number>, after: Set<number>): Promise<void> {
    const version = this.nextVersion();
    const row = (svcId: number, member: number) => ({ app_id: appId, cohort_id: cohortId, svc_id: svcId, member, version });
    await this.insert('cohort_members', [...[...before].filter((id) => !after.has(id)).map((id) => row(id, 0)), ...[...after].filter((id) => !before.has(id)).map((id) => row(id, 1))]);
  }

  replaceCohortMembers(appId: number, cohortId: string, svcIds: readonly number[]): Promise<void> {
    return this.serial(async () => this.writeCohortMembers(appId, cohortId, new Set(await this.readCohortMembers(appId, cohortId)), new Set(svcIds)));
  }

  changeCohortMembers(appId: number, cohortId: string, changes: readonly CohortMembershipChange[]): Promise<void> {
    return this.serial(async () => {
      const before = new Set(await this.readCohortMembers(appId, cohortId));
      const after = new Set(before);
      for (const { add, svcIds } of changes) for (const svcId of svcIds) (add ? after.add(svcId) : after.delete(svcId));
      await this.writeCohortMembers(appId, cohortId, before, after);
    });
  }

  private async readCohortMembers(appId: number, cohortId: string): Promise<number[]> {
    return (await this.store.query(`${currentCohortMembers(appId, cohortId, literal)} ORDER BY svc_id`)).map((r) => Number(r.svc_id));
  }

  cohortMembers(appId: number, cohortId: string): Promise<number[]> {
    return this.serial(() => this.readCohortMembers(appId, cohortId));
  }

  cohortSizes(appId: number): Promise<Map<string, number>> {
    return this.serial(async () => {
      const rows = await this.store.query(
        `SELECT cohort_id, countIf(member = 1) AS n FROM (SELECT cohort_id, svc_id, argMax(member, version) AS member FROM cohort_members WHERE app_id = ${Math.trunc(appId)} GROUP BY cohort_id, svc_id) GROUP BY cohort_id HAVING n > 0`,
      );
      return new Map(rows.map((r) => [r.cohort_id as string, Number(r.n)]));
    });
  }
}
