// The DuckDB engine: events land in one table straight from journal segments (read_json in
// SQL rather than row-by-row appends), each with its `svc_id` (resolved in ingestion order, in
// JS: identities.ts) and its global ingestion order `ingest_seq`; user profiles (by `svc_id`,
// with one version per `$identify` for reporting's properties at event time) and group
// profiles are small tables updated from the `$identify` / `$groupidentify` rows of each
// segment (profiles.ts). Timelines (engine-timelines.ts) and materialized properties
// (materialized-properties.ts) follow the loads in the background.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { PRIVATE_MASK } from '../../shared/private-files.js';
import { yieldToEventLoop } from '../../shared/time-slice.js';
import type { FunnelGroup } from '../../model/funnel-times.js';
import type { Identities } from '../identity.js';
import { journalLine } from '../journal-line.js';
import { SharedEntities, SharedEntityEngine, userMappingRows } from '../shared-entities.js';
import type { TimelineCounts, TimelineCountsQuery } from '../timelines/counts.js';
import type { TimelineFunnelQuery } from '../timelines/funnel.js';
import { ADVERTISING_ID_FIELDS, insertIdOf, type Engine, type GroupKey, type HeldAttribution, type KnownAdvertisingId, type LoadedEvent, type UserMappingChange, type SqlSession, type SqlValue, type CohortMembers, type CohortMembershipChange, type UserData, type StreamedEvents, type StreamedEventsQuery, type ExportedEvents, type ExportHourSummary } from '../types.js';
import { exportHoursSql, hourSummary } from '../exported-events.js';
import { DUCKDB_EXPORT_WORDS, exportLinesSql } from './export-lines.js';
import { eventPropertyText } from './dialect.js';
import { EngineTimelines, noEvents, segmentTimelineEvents } from './engine-timelines.js';
import { persistIdentities, readIdentities, resolveIdentities } from './identities.js';
import { MaterializedProperties } from './materialized-properties.js';
import { applyGroupProfiles, applyUserProfiles } from './profiles.js';
import { DuckDbReaders } from './readers.js';
import { numbersOf, parseJsonColumns, type Row, rowsOf } from './results.js';
import { rebuildUserSummaries, summarizeLoadedEvents, userSummariesMissing } from './user-summaries.js';
import { columnList, IN_USERS, quote, SCHEMA, SEGMENT_COLUMNS, segmentColumnList, sqlString, STORED_COLUMNS, USERS_DEVICES } from './schema.js';

/** DuckDB's own settings. */
export interface DuckDbOptions {
  /** DuckDB's memory limit (its syntax, e.g. `1GB`): its buffer cache keeps data blocks up to it; DuckDB's default is 80% of RAM. */
  memoryLimit?: string;
  /** The most bytes the timelines may hold (`--timeline-memory`); a quarter of RAM by default, 0 for none (funnels and counts in SQL). */
  timelineMemoryBytes?: number;
}

export class DuckDbEngine extends SharedEntityEngine implements Engine, CohortMembers, UserData, StreamedEvents, ExportedEvents {
  private queue: Promise<unknown> = Promise.resolve();
  readonly journalLine = journalLine;
  private closing = false;
  /** The timelines plain funnels and counts read, built from the events and kept up to date by the loads. */
  private readonly timelines: EngineTimelines;
  /** Event properties materialized in columns of `events`. */
  private readonly properties: MaterializedProperties;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    /** Reporting queries: connections of their own, so that loads and queries do not wait for each other. */
    private readonly readers: DuckDbReaders,
    /** The timelines' builds: a long read of its own. */
    private readonly builder: DuckDBConnection,
    protected readonly identities: Identities,
    /** The `ingest_seq` of the last event loaded. */
    private lastIngestSeq: number,
    /** Operator-facing messages (background work that failed). */
    log: (message: string) => void,
    timelineMemoryBytes: number,
  ) {
    super();
    this.timelines = new EngineTimelines(builder, (work) => this.serial(work), () => this.closing, log, timelineMemoryBytes);
    this.properties = new MaterializedProperties(connection, (work) => this.transaction(work), () => this.lastIngestSeq, () => this.closing, log);
  }

  static async open(dataDir: string, log: (message: string) => void = (message) => console.error(message), { memoryLimit, timelineMemoryBytes = Math.floor(totalmem() / 4) }: DuckDbOptions = {}): Promise<DuckDbEngine> {
    // Checkpoints run in the background loader's transactions, never on the request path.
    // One DuckDB thread: on a 2-core machine the second core stays with the request path.
    // DuckDB creates its database and WAL files with the process's file mode mask.
    process.umask(PRIVATE_MASK);
    const instance = await DuckDBInstance.create(join(dataDir, 'events.duckdb'), { threads: '1', ...(memoryLimit === undefined ? {} : { memory_limit: memoryLimit }) });
    const connection = await instance.connect();
    await connection.run(SCHEMA);
    const { identities, lastIngestSeq } = await readIdentities(connection);
    const engine = new DuckDbEngine(instance, connection, new DuckDbReaders(instance), await instance.connect(), identities, lastIngestSeq, log, timelineMemoryBytes);
    await engine.entities.tables();
    await engine.identifyEarlierEvents();
    if (await userSummariesMissing(connection)) await rebuildUserSummaries(connection);
    // Built in the background: funnels are SQL until then (timelinesBuilt).
    engine.timelines.build((await rowsOf(connection, 'SELECT DISTINCT app_id FROM events WHERE svc_id IS NOT NULL')).map((row) => Number(row.app_id)));
    await engine.properties.open();
    return engine;
  }

  /**
   * Events stored before identities existed (older data directories) get their `ingest_seq`
   * (load order) and `svc_id`, and profiles are rebuilt from their `$identify` events.
   */
  private async identifyEarlierEvents(): Promise<void> {
    const [pending] = await this.rows('SELECT count(*) AS n FROM events WHERE ingest_seq IS NULL');
    if (Number(pending!.n) === 0) return;
    await this.inTransaction(async () => {
      await this.connection.run('UPDATE events SET ingest_seq = rowid + 1 WHERE ingest_seq IS NULL');
      await this.connection.run('CREATE OR REPLACE TEMP TABLE segment AS SELECT * EXCLUDE (seq, svc_id), ingest_seq AS seq, NULL::JSON AS held_attribution FROM events WHERE svc_id IS NULL');
      const batch = await resolveIdentities(this.connection, this.identities);
      await this.connection.run('UPDATE events SET svc_id = segment_ids.svc_id FROM segment_ids WHERE events.ingest_seq = segment_ids.seq');
      await persistIdentities(this.connection, batch);
      await this.connection.run('DELETE FROM profiles');
      await this.connection.run('DELETE FROM profile_versions');
      await applyUserProfiles(this.connection, 0);
      const [last] = await this.rows('SELECT max(ingest_seq) AS last FROM events');
      await this.connection.run('DROP TABLE segment');
      return () => {
        batch.commit();
        this.lastIngestSeq = Number(last!.last);
      };
    });
  }

  /** One statement sequence at a time on the single connection. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private rows(sql: string, values?: SqlValue[]): Promise<Row[]> {
    return rowsOf(this.connection, sql, values);
  }

  private readonly direct = {
    rows: (sql: string, values?: SqlValue[]) => this.rows(sql, values).then(numbersOf),
    run: async (sql: string, values?: SqlValue[]) => void (await this.connection.run(sql, values as (string | number)[])),
  };

  readonly sql: SqlSession = {
    rows: (sql, values) => this.serial(() => this.direct.rows(sql, values)),
    run: (sql, values) => this.serial(() => this.direct.run(sql, values)),
    transaction: <T>(work: (session: Omit<SqlSession, 'transaction'>) => Promise<T>) =>
      this.serial(async () => {
        let result: T;
        await this.inTransaction(async () => {
          result = await work(this.direct);
        });
        return result!;
      }),
  };

  protected readonly entities = new SharedEntities(this.sql);

  isLoaded(name: string): Promise<boolean> {
    return this.serial(async () => (await this.rows('SELECT 1 FROM loaded_segments WHERE name = ?', [name])).length > 0);
  }

  loadSegment(path: string, name: string): Promise<void> {
    return this.transaction(async () => {
      // No ignore_errors: a record DuckDB cannot read fails the load, and the journal
      // isolates it (a torn tail is cut off before loading).
      await this.connection.run(
        `CREATE OR REPLACE TEMP TABLE segment AS SELECT *, row_number() OVER () AS seq FROM read_json(${sqlString(path)}, format = 'newline_delimited', columns = ${SEGMENT_COLUMNS})`,
      );
      const batch = await resolveIdentities(this.connection, this.identities);
      const materialized = this.properties.all();
      await this.connection.run(
        `INSERT INTO events (${columnList}, seq, svc_id, ingest_seq${materialized.map(([, { column }]) => `, ${quote(column)}`).join('')})
         SELECT ${segmentColumnList}, s.seq, i.svc_id, s.seq + ${this.lastIngestSeq}${materialized.map(([name]) => `, ${eventPropertyText('s.event_properties', name)}`).join('')}
         FROM segment s LEFT JOIN segment_ids i USING (seq) WHERE s.held_attribution IS NULL`,
      );
      const events = await segmentTimelineEvents(this.connection, this.lastIngestSeq);
      await persistIdentities(this.connection, batch);
      await this.applyAttributionHolds();
      await applyUserProfiles(this.connection, this.lastIngestSeq);
      await applyGroupProfiles(this.connection);
      await summarizeLoadedEvents(this.connection, this.lastIngestSeq);
      await this.connection.run('INSERT INTO loaded_segments VALUES (?, ?)', [name, Date.now()]);
      const [last] = await this.rows('SELECT coalesce(max(seq), 0) AS last FROM segment');
      await this.connection.run('DROP TABLE segment');
      const { merges } = batch.changes();
      return () => {
        batch.commit();
        this.lastIngestSeq += Number(last!.last);
        this.timelines.change({ events, merges });
      };
    });
  }

  /** A plain funnel from the project's timelines; undefined while they are not built. */
  timelineFunnel(query: TimelineFunnelQuery): Promise<FunnelGroup[] | undefined> {
    return this.timelines.funnel(query);
  }

  /** Plain counts from the project's timelines; undefined while they are not built. */
  timelineCounts(query: TimelineCountsQuery): Promise<TimelineCounts | undefined> {
    return this.timelines.counts(query);
  }

  timelinesBuilt(): Promise<void> {
    return this.timelines.built();
  }

  materializeEventProperties(names: readonly string[]): Promise<void> {
    this.properties.materialize(names);
    return Promise.resolve();
  }

  /** Resolves once the properties noted so far are materialized (or a fill failed). */
  propertiesMaterialized(): Promise<void> {
    return this.properties.materialized();
  }

  /** Holds start before they end: a hold and its release can share a segment. */
  private async applyAttributionHolds(): Promise<void> {
    await this.connection.run(
      `INSERT INTO held_attributions SELECT held_attribution->>'id', CAST(held_attribution->>'app_id' AS INTEGER), CAST(held_attribution->>'received_at' AS BIGINT), held_attribution->'event'
       FROM segment WHERE held_attribution IS NOT NULL ORDER BY seq`,
    );
    await this.connection.run('DELETE FROM held_attributions WHERE id IN (SELECT released_attribution FROM segment WHERE released_attribution IS NOT NULL)');
  }

  async *recentInsertIds(since: number): AsyncIterable<[number, string, number][]> {
    const sql = `SELECT app_id, insert_id, server_upload_time FROM events WHERE insert_id IS NOT NULL AND server_upload_time >= ${Math.trunc(since)} ORDER BY server_upload_time, ingest_seq`;
    for await (const rows of this.queryChunks(sql)) yield rows.map(insertIdOf);
  }

  knownAdvertisingIds(since: number): Promise<KnownAdvertisingId[]> {
    const carriers = ADVERTISING_ID_FIELDS.map(
      (field) => `SELECT app_id, '${field}' AS field, ${field} AS value, user_id, device_id, server_upload_time AS seen_at, rowid AS position FROM events WHERE ${field} IS NOT NULL AND server_upload_time >= ?`,
    ).join(' UNION ALL ');
    return this.serial(async () => {
      const rows = await this.rows(
        `SELECT app_id, field, value, user_id, device_id, seen_at FROM (${carriers}) QUALIFY row_number() OVER (PARTITION BY app_id, field, value ORDER BY position DESC) = 1`,
        ADVERTISING_ID_FIELDS.map(() => since),
      );
      return rows.map((r) => ({ ...(r as unknown as KnownAdvertisingId), app_id: Number(r.app_id), seen_at: Number(r.seen_at) }));
    });
  }

  heldAttributions(since: number): Promise<HeldAttribution[]> {
    return this.serial(async () => {
      const rows = await this.rows('SELECT id, app_id, received_at, event FROM held_attributions WHERE received_at >= ? ORDER BY received_at', [since]);
      return rows.map((r) => ({ id: r.id as string, app_id: Number(r.app_id), received_at: Number(r.received_at), event: JSON.parse(r.event as string) as Record<string, unknown> }));
    });
  }

  events(appId: number): Promise<LoadedEvent[]> {
    return this.serial(async () => (await this.rows(`SELECT ${STORED_COLUMNS} FROM events WHERE app_id = ? ORDER BY ingest_seq`, [appId])).map(parseJsonColumns));
  }

  /** Rows of a reporting query (numbers as numbers), converted a chunk at a time so that a large result does not hold the event loop. */
  async query(sql: string): Promise<Record<string, unknown>[]> {
    const rows: Record<string, unknown>[] = [];
    for await (const chunk of this.queryChunks(sql)) for (const row of chunk) rows.push(row);
    return rows;
  }

  /** Rows of a large reporting query, a chunk (about 2048 rows) at a time, the event loop served in between. */
  async *queryChunks(sql: string): AsyncIterable<Record<string, unknown>[]> {
    yield* this.readers.stream(async function* (reader) {
      const result = await reader.stream(sql);
      for await (const rows of result.yieldRowObjectJs()) {
        yield numbersOf(rows as Row[]);
        await yieldToEventLoop();
      }
    });
  }

  /** The profile of the user with this `user_id`, or of the device with this `device_id`. */
  userProfile(appId: number, userOrDeviceId: string): Promise<Record<string, unknown> | undefined> {
    return this.serial(async () => {
      const svcId = this.identities.svcIdOf(appId, userOrDeviceId);
      if (svcId === undefined) return undefined;
      const rows = await this.rows('SELECT properties FROM profiles WHERE app_id = ? AND svc_id = ?', [appId, svcId]);
      return rows[0] ? (JSON.parse(rows[0].properties as string) as Record<string, unknown>) : undefined;
    });
  }

  groupProfile(appId: number, group: GroupKey): Promise<Record<string, unknown> | undefined> {
    return this.serial(async () => {
      const rows = await this.rows('SELECT properties FROM group_profiles WHERE app_id = ? AND group_type = ? AND group_value = ?', [
        appId,
        group.group_type,
        group.group_value,
      ]);
      return rows[0] ? (JSON.parse(rows[0].properties as string) as Record<string, unknown>) : undefined;
    });
  }

  applyUserMappings(appIds: number[], changes: UserMappingChange[]): Promise<void> {
    return this.serial(async () => {
      const batch = this.identities.begin();
      const rows = userMappingRows(batch, appIds, changes);
      await this.inTransaction(async () => {
        await persistIdentities(this.connection, batch);
        await this.entities.applyUserMappings(rows, this.direct);
        const { merges } = batch.changes();
        return () => {
          batch.commit();
          this.timelines.change({ events: noEvents(), merges });
        };
      });
    });
  }

  svcIdsWithData(appId: number, svcIds: number[]): Promise<Set<number>> {
    if (svcIds.length === 0) return Promise.resolve(new Set());
    return this.serial(async () => {
      const rows = await this.rows(`SELECT DISTINCT svc_id FROM events WHERE app_id = ? AND svc_id IN (${svcIds.map(() => '?').join(', ')})`, [appId, ...svcIds]);
      return new Set(rows.map((r) => Number(r.svc_id)));
    });
  }

  replaceCohortMembers(appId: number, cohortId: string, svcIds: readonly number[]): Promise<void> {
    return this.transaction(async () => {
      await this.connection.run('DELETE FROM cohort_members WHERE app_id = ? AND cohort_id = ?', [appId, cohortId]);
      await this.insertCohortMembers(appId, cohortId, svcIds);
    });
  }

  changeCohortMembers(appId: number, cohortId: string, changes: readonly CohortMembershipChange[]): Promise<void> {
    return this.transaction(async () => {
      for (const change of changes) {
        await this.connection.run('DELETE FROM cohort_members WHERE app_id = ? AND cohort_id = ? AND svc_id IN (SELECT unnest(?::BIGINT[]))', [appId, cohortId, JSON.stringify(change.svcIds)]);
        if (change.add) await this.insertCohortMembers(appId, cohortId, change.svcIds);
      }
    });
  }

  private async insertCohortMembers(appId: number, cohortId: string, svcIds: readonly number[]): Promise<void> {
    if (svcIds.length === 0) return;
    await this.connection.run(
      'INSERT INTO cohort_members SELECT ?, ?, id FROM (SELECT DISTINCT unnest(?::BIGINT[]) AS id) WHERE id NOT IN (SELECT svc_id FROM cohort_members WHERE app_id = ? AND cohort_id = ?)',
      [appId, cohortId, JSON.stringify(svcIds), appId, cohortId],
    );
  }

  cohortMembers(appId: number, cohortId: string): Promise<number[]> {
    return this.serial(async () => (await this.rows('SELECT svc_id FROM cohort_members WHERE app_id = ? AND cohort_id = ? ORDER BY svc_id', [appId, cohortId])).map((r) => Number(r.svc_id)));
  }

  cohortSizes(appId: number): Promise<Map<string, number>> {
    return this.serial(async () => new Map((await this.rows('SELECT cohort_id, count(*) AS n FROM cohort_members WHERE app_id = ? GROUP BY cohort_id', [appId])).map((r) => [r.cohort_id as string, Number(r.n)])));
  }

  profileProperties(appId: number, svcIds: readonly number[]): Promise<Map<number, Record<string, unknown>>> {
    return this.serial(async () => {
      const rows = await this.rows('SELECT svc_id, properties FROM profiles WHERE app_id = ? AND svc_id IN (SELECT unnest(?::BIGINT[]))', [appId, JSON.stringify(svcIds)]);
      return new Map(rows.map((r) => [Number(r.svc_id), JSON.parse(r.properties as string) as Record<string, unknown>]));
    });
  }

  latestEventValues(appId: number, svcIds: readonly number[], columns: ReadonlyMap<string, string>): Promise<Map<number, Map<string, unknown>>> {
    const names = [...columns.keys()];
    const selected = [...columns.values()].map((column, i) => `arg_max(${quote(column)}, time) AS v${i}`).join(', ');
    return this.serial(async () => {
      const rows = await this.rows(`SELECT svc_id, ${selected} FROM events WHERE app_id = ? AND svc_id IN (SELECT unnest(?::BIGINT[])) GROUP BY svc_id`, [appId, JSON.stringify(svcIds)]);
      return new Map(rows.map((r) => [Number(r.svc_id), new Map(names.map((name, i) => [name, r[`v${i}`]]))]));
    });
  }

  loadedIngestSeq(): Promise<number> {
    return this.serial(async () => Number((await this.rows('SELECT coalesce(max(ingest_seq), 0) AS last FROM events'))[0]!.last));
  }

  streamedEvents(query: StreamedEventsQuery): Promise<{ ingestSeq: number; serverUploadTime: number }[]> {
    const typeFilter = query.eventTypes ? ` AND list_contains(from_json(?, '["VARCHAR"]'), event_type)` : '';
    return this.serial(async () => {
      const rows = await this.rows(
        `SELECT ingest_seq, server_upload_time FROM events
          WHERE app_id = ? AND ingest_seq > ? AND ingest_seq <= ? AND svc_id IS NOT NULL AND server_upload_time >= ?${typeFilter}
          ORDER BY ingest_seq LIMIT ?`,
        [query.appId, query.afterSeq, query.untilSeq, query.since, ...(query.eventTypes ? [JSON.stringify(query.eventTypes)] : []), query.limit],
      );
      return rows.map((r) => ({ ingestSeq: Number(r.ingest_seq), serverUploadTime: Number(r.server_upload_time) }));
    });
  }

  eventsBySeq(ingestSeqs: readonly number[]): Promise<Record<string, unknown>[]> {
    return this.serial(async () => {
      const rows = await this.rows(`SELECT to_json(e) AS event FROM (SELECT ${STORED_COLUMNS} FROM events WHERE ingest_seq IN (SELECT unnest(?::BIGINT[]))) e ORDER BY ingest_seq`, [JSON.stringify(ingestSeqs)]);
      return rows.map((r) => JSON.parse(r.event as string) as Record<string, unknown>);
    });
  }

  async exportHours(appId: number, fromMs: number, toMs: number): Promise<ExportHourSummary[]> {
    return (await this.query(exportHoursSql(DUCKDB_EXPORT_WORDS, appId, fromMs, toMs))).map(hourSummary);
  }

  /** A chunk's lines are read as the column's values, not as row objects: the export reads a million of them. */
  async *exportLines(appId: number, fromMs: number, toMs: number): AsyncIterable<string> {
    const sql = exportLinesSql(appId, fromMs, toMs);
    yield* this.readers.stream(async function* (reader) {
      const result = await reader.stream(sql);
      for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
        yield `${(chunk.getColumnValues(0) as string[]).join('\n')}\n`;
        await yieldToEventLoop();
      }
    });
  }

  devicesOfDeletionJob(appId: number, day: string): Promise<string[]> {
    return this.serial(async () => {
      const users = JSON.stringify((await this.entities.doomed(appId, day, this.direct)).map((e) => e.svcId));
      return (await this.rows(`SELECT device_id FROM identity_devices WHERE ${USERS_DEVICES}`, [appId, users, appId, users])).map((r) => r.device_id as string);
    });
  }

  scrubDeletionJob(appId: number, day: string, today: string): Promise<void> {
    return this.transaction(async () => {
      const svcIds = (await this.entities.doomed(appId, day, this.direct)).map((e) => e.svcId);
      const users = JSON.stringify(svcIds);
      // Devices that belonged to a deleted user go too: their later events start a new user.
      await this.connection.run(`DELETE FROM identity_devices WHERE ${USERS_DEVICES}`, [appId, users, appId, users]);
      for (const table of ['events', 'profiles', 'profile_versions', 'cohort_members', 'identity_users', 'user_summaries']) {
        await this.connection.run(`DELETE FROM ${table} WHERE app_id = ? AND ${IN_USERS}`, [appId, users]);
      }
      await this.entities.recordScrub(appId, day, svcIds, today, this.direct);
      return () => {
        this.identities.forget(appId, new Set(svcIds));
        this.timelines.forget(appId);
      };
    });
  }

  /** `inTransaction`, in turn with the engine's other work. */
  private transaction(work: () => Promise<(() => void) | void>): Promise<void> {
    return this.serial(() => this.inTransaction(work));
  }

  /** Runs `work` in one transaction; what it returns runs after the commit (in-memory state that must follow it). */
  private async inTransaction(work: () => Promise<(() => void) | void>): Promise<void> {
    await this.connection.run('BEGIN TRANSACTION');
    let afterCommit: (() => void) | void;
    try {
      afterCommit = await work();
      await this.connection.run('COMMIT');
    } catch (error) {
      await this.connection.run('ROLLBACK');
      throw error;
    }
    afterCommit?.();
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.timelines.built().catch(() => undefined);
    await this.properties.materialized().catch(() => undefined);
    await this.timelines.closeFunnelThread();
    return this.serial(async () => {
      await this.connection.run('CHECKPOINT');
      this.builder.closeSync();
      this.readers.close();
      this.connection.closeSync();
      this.instance.closeSync();
    });
  }
}
