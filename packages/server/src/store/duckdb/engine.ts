// The DuckDB engine: events land in one table straight from journal segments (read_json in
// SQL, several times faster than row-by-row appends), each with its `svc_id` (resolved in
// ingestion order, in JS, chunk by chunk so that the event loop keeps serving) and its
// global ingestion order `ingest_seq`; user profiles (by `svc_id`, with one version per
// `$identify` for reporting's properties at event time) and group profiles are small tables
// updated from the `$identify` / `$groupidentify` rows of each segment.
import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection, type DuckDBResult, type DuckDBVector } from '@duckdb/node-api';
import { join } from 'node:path';
import { PRIVATE_MASK } from '../../shared/private-files.js';
import { Identities, type IdentityBatch, type IdentityRows } from '../identity.js';
import { foldProfiles, groupProfileKey, groupsOf, type Properties, updatedProfiles } from '../profiles.js';
import { DuckDbReaders } from './readers.js';
import { SharedEntities, SharedEntityEngine, userMappingRows } from '../shared-entities.js';
import { eachInSlices, timeSlicer, yieldToEventLoop } from '../../shared/time-slice.js';
import { TimelineBuilder, UserTimelines } from '../timelines/timelines.js';
import { timelineCounts, type TimelineCounts, type TimelineCountsQuery } from '../timelines/counts.js';
import { FunnelThread } from '../timelines/funnel-helper.js';
import { timelineFunnel, type TimelineFunnelQuery } from '../timelines/funnel.js';
import type { FunnelGroup } from '../../model/funnel-times.js';
import { eventPropertyText } from './dialect.js';
import { EVENT_COLUMNS, journalLine, LINE_COLUMNS } from '../journal-line.js';
import { ADVERTISING_ID_FIELDS, insertIdOf, type Engine, type JournalRecord, type GroupKey, type HeldAttribution, type KnownAdvertisingId, type LoadedEvent, type StoredEvent, type UserMappingChange, type SqlSession, type SqlValue, type CohortMembers, type CohortMembershipChange, type UserData, type StreamedEvents, type StreamedEventsQuery } from '../types.js';

const JSON_COLUMNS = Object.entries(EVENT_COLUMNS)
  .filter(([, type]) => type === 'JSON')
  .map(([name]) => name);
const quote = (name: string) => `"${name}"`;
const sqlString = (value: string) => `'${value.replace(/'/g, "''")}'`;
const columnList = Object.keys(EVENT_COLUMNS).map(quote).join(', ');
/** An event row's columns other than the materialized properties (which are the engine's, not the event's). */
const STORED_COLUMNS = `${columnList}, seq, svc_id, ingest_seq`;
const segmentColumnList = Object.keys(EVENT_COLUMNS).map((name) => `s.${quote(name)}`).join(', ');
const SEGMENT_COLUMNS = `{${Object.entries(LINE_COLUMNS)
  .map(([column, type]) => `${sqlString(column)}: ${sqlString(type)}`)
  .join(', ')}}`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (${Object.entries(EVENT_COLUMNS)
  .map(([name, type]) => `${quote(name)} ${type}`)
  .join(', ')}, seq BIGINT);
${Object.entries(EVENT_COLUMNS)
  .map(([name, type]) => `ALTER TABLE events ADD COLUMN IF NOT EXISTS ${quote(name)} ${type};`)
  .join('\n')}
ALTER TABLE events ADD COLUMN IF NOT EXISTS svc_id BIGINT;
ALTER TABLE events ADD COLUMN IF NOT EXISTS ingest_seq BIGINT;
CREATE TABLE IF NOT EXISTS loaded_segments (name VARCHAR PRIMARY KEY, loaded_at BIGINT);
CREATE TABLE IF NOT EXISTS identity_users (app_id INTEGER, user_id VARCHAR, svc_id BIGINT, PRIMARY KEY (app_id, user_id));
CREATE TABLE IF NOT EXISTS identity_devices (app_id INTEGER, device_id VARCHAR, svc_id BIGINT, owner VARCHAR, PRIMARY KEY (app_id, device_id));
CREATE TABLE IF NOT EXISTS svc_merges (from_svc BIGINT PRIMARY KEY, to_svc BIGINT);
CREATE TABLE IF NOT EXISTS profiles (app_id INTEGER, svc_id BIGINT, properties JSON, updated_at BIGINT, PRIMARY KEY (app_id, svc_id));
CREATE TABLE IF NOT EXISTS profile_versions (app_id INTEGER, svc_id BIGINT, ingest_seq BIGINT, properties JSON);
CREATE TABLE IF NOT EXISTS cohort_members (app_id INTEGER, cohort_id VARCHAR, svc_id BIGINT);
CREATE TABLE IF NOT EXISTS held_attributions (id VARCHAR PRIMARY KEY, app_id INTEGER, received_at BIGINT, event JSON);
CREATE TABLE IF NOT EXISTS group_profiles (app_id INTEGER, group_type VARCHAR, group_value VARCHAR, properties JSON, updated_at BIGINT, PRIMARY KEY (app_id, group_type, group_value));
CREATE TABLE IF NOT EXISTS materialized_properties (name VARCHAR PRIMARY KEY, column_name VARCHAR NOT NULL, ready BOOLEAN NOT NULL);
`;

/** At most this many materialized properties: their names are user data, and each costs a column and a fill of every event. */
const MAX_PROPERTY_COLUMNS = 64;
/** Events per statement of a materialization's fill: loads and other writes take their turns in between. */
const FILL_CHUNK = 1_000_000;

/** An event property materialized in a column of `events` (ready once every event before it was added is filled). */
interface PropertyColumn {
  column: string;
  ready: boolean;
}

type Row = Record<string, unknown>;

/** After a failed run, the work is tried again this much later, doubled for each failure in a row up to the most. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MOST_MS = 3_600_000;

/**
 * Work done in the background a round at a time while some is due: one run at a time. A failed
 * round ends the run; `failed` is told (for the operator's log) and the work is tried again
 * after a wait that grows with each failure in a row (a start asked for meanwhile is that retry).
 */
class BackgroundRounds {
  private running?: Promise<void>;
  private retryMs = 0;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly due: () => boolean,
    private readonly round: () => Promise<void>,
    private readonly failed: (error: Error, retryInMs: number) => void,
  ) {}

  /** Starts a run unless one is on or a retry is waiting. */
  start(): void {
    if (this.running || this.retry) return;
    const rounds = async () => {
      while (this.due()) await this.round();
    };
    this.running = rounds().then(
      () => {
        this.running = undefined;
        this.retryMs = 0;
        // Work that came as the last round ended.
        if (this.due()) this.start();
      },
      (error: unknown) => {
        this.running = undefined;
        this.retryMs = Math.min(RETRY_MOST_MS, 2 * this.retryMs || RETRY_FIRST_MS);
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.start();
        }, this.retryMs).unref();
        this.failed(error as Error, this.retryMs);
        throw error;
      },
    );
    // The failure is logged; `ended` gives it to whoever waits for the run.
    this.running.catch(() => undefined);
  }

  /** Resolves once no run is on (a retry waiting is not a run); rejects when the run it waited for failed. */
  async ended(): Promise<void> {
    while (this.running) await this.running;
  }
}

function parseJsonColumns(row: Row): LoadedEvent {
  for (const name of JSON_COLUMNS) if (typeof row[name] === 'string') row[name] = JSON.parse(row[name] as string);
  for (const name of ['app_id', 'time', 'server_upload_time', 'session_id', 'event_id', 'quantity', 'svc_id']) {
    if (typeof row[name] === 'bigint') row[name] = Number(row[name]);
  }
  delete row.seq;
  delete row.ingest_seq;
  return row as unknown as LoadedEvent;
}

/** BIGINT columns as numbers (the values reporting reads are far below 2^53). */
function numbersOf(rows: Row[]): Row[] {
  for (const row of rows) for (const [key, value] of Object.entries(row)) if (typeof value === 'bigint') row[key] = Number(value);
  return rows;
}

/** Appends one row per item, yielding to the event loop every few thousand: a segment can hold many. */
async function appendAll<T>(appender: DuckDBAppender, items: readonly T[], append: (item: T, index: number) => void): Promise<void> {
  await eachInSlices(items, (item, index) => {
    append(item, index);
    appender.endRow();
  });
  appender.closeSync();
}

/** Reads a result's chunks: `row` gets each row's column vectors and index. */
async function eachRow(result: DuckDBResult, row: (columns: DuckDBVector[], index: number) => void, stop = () => false): Promise<void> {
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0 && !stop(); chunk = await result.fetchChunk()) {
    const columns = Array.from({ length: chunk.columnCount }, (_, i) => chunk.getColumnVector(i));
    // rowCount asks the native chunk each time.
    const rows = chunk.rowCount;
    for (let index = 0; index < rows; index++) row(columns, index);
  }
}

/** Events a load added (one array per column) and the users it merged, for the timelines. */
interface TimelineChange {
  events: { appIds: number[]; svcIds: number[]; times: number[]; types: (string | null)[]; seqs: number[] };
  merges: { from: number; to: number }[];
}

/** These users' `svc_id`s: the parameter is their JSON list. */
const IN_USERS = 'svc_id IN (SELECT unnest(?::BIGINT[]))';
/** The condition on `identity_devices` of the devices of these users (their own or joined to them); parameters: project, users, project, users. */
const USERS_DEVICES = `app_id = ? AND (${IN_USERS} OR owner IN (SELECT user_id FROM identity_users WHERE app_id = ? AND ${IN_USERS}))`;

export class DuckDbEngine extends SharedEntityEngine implements Engine, CohortMembers, UserData, StreamedEvents {
  private queue: Promise<unknown> = Promise.resolve();
  readonly journalLine = journalLine;
  /** Per project and user, the events as timelines (plain funnels read them). */
  private readonly timelines = new UserTimelines();
  /** Projects whose timelines are to be built (at open, or after a change they cannot follow): their funnels are SQL meanwhile. */
  private readonly unbuilt = new Set<number>();
  /** While a build reads its snapshot: the changes loads made since, replayed on what it built. */
  private changesDuringBuild?: TimelineChange[];
  /** While a build runs: the projects forgotten since it started (what it read of them is stale). */
  private forgottenDuringBuild?: Set<number>;
  /** Builds the timelines of the projects to build; a failed round leaves them to SQL. */
  private readonly timelineBuilds = new BackgroundRounds(
    () => this.unbuilt.size > 0 && !this.closing,
    () => this.buildRound(),
    (error, retryInMs) => this.log(`building the reporting timelines failed, tried again in ${retryInMs / 1000} s; funnels and counts of the projects not built are answered by SQL meanwhile, slower: ${error.stack ?? error.message}`),
  );
  /** Event properties materialized in columns of `events`, by name (`materialized_properties` as committed). */
  private readonly propertyColumns = new Map<string, PropertyColumn>();
  /** Properties noted for materialization whose column is not ready yet. */
  private readonly toMaterialize = new Set<string>();
  /** Materializes the noted properties one at a time. A failed fill ends the run; its property stays noted. */
  private readonly materializations = new BackgroundRounds(
    () => this.toMaterialize.size > 0 && !this.closing,
    async () => {
      const [name] = this.toMaterialize;
      await this.materializeProperty(name!);
      this.toMaterialize.delete(name!);
    },
    // The property that failed is still the first noted.
    (error, retryInMs) => this.log(`materializing the event property ${JSON.stringify([...this.toMaterialize][0])} failed, tried again in ${retryInMs / 1000} s; queries read it from the events' properties meanwhile, slower: ${error.stack ?? error.message}`),
  );
  private closing = false;
  /** Tallies half of a large funnel's users. */
  private readonly funnelThread = new FunnelThread((message) => this.log(message));

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
    private readonly log: (message: string) => void,
  ) {
    super();
  }

  static async open(dataDir: string, log: (message: string) => void = (message) => console.error(message)): Promise<DuckDbEngine> {
    // Checkpoints run in the background loader's transactions, never on the request path.
    // One DuckDB thread: on a 2-core machine the second core stays with the request path
    // (measured: 28k → 44k acknowledged events/s with the loader running).
    // DuckDB creates its database and WAL files with the process's file mode mask.
    process.umask(PRIVATE_MASK);
    const instance = await DuckDBInstance.create(join(dataDir, 'events.duckdb'), { threads: '1' });
    const connection = await instance.connect();
    await connection.run(SCHEMA);
    const read = async (sql: string) => (await connection.runAndReadAll(sql)).getRowObjectsJS() as Row[];
    const rows: IdentityRows = {
      users: (await read('SELECT app_id, user_id, svc_id FROM identity_users')).map((r) => ({ appId: Number(r.app_id), userId: r.user_id as string, svcId: Number(r.svc_id) })),
      devices: (await read('SELECT app_id, device_id, svc_id, owner FROM identity_devices')).map((r) => ({
        appId: Number(r.app_id),
        deviceId: r.device_id as string,
        svcId: Number(r.svc_id),
        owner: (r.owner as string | null) ?? null,
      })),
      merges: (await read('SELECT from_svc, to_svc FROM svc_merges')).map((r) => ({ from: Number(r.from_svc), to: Number(r.to_svc) })),
    };
    const [last] = await read('SELECT coalesce(max(ingest_seq), 0) AS ingest_seq, (SELECT coalesce(max(svc_id), 0) FROM (SELECT svc_id FROM identity_users UNION ALL SELECT svc_id FROM identity_devices)) AS svc_id FROM events');
    const engine = new DuckDbEngine(instance, connection, new DuckDbReaders(instance), await instance.connect(), Identities.from(rows, Number(last!.svc_id) + 1), Number(last!.ingest_seq), log);
    await engine.entities.tables();
    await engine.identifyEarlierEvents();
    // Built in the background: funnels are SQL until then (timelinesBuilt).
    for (const row of await read('SELECT DISTINCT app_id FROM events WHERE svc_id IS NOT NULL')) engine.unbuilt.add(Number(row.app_id));
    engine.timelineBuilds.start();
    for (const row of await read('SELECT name, column_name, ready FROM materialized_properties')) {
      engine.propertyColumns.set(row.name as string, { column: row.column_name as string, ready: row.ready as boolean });
      // A fill a crash or a close interrupted is done again.
      if (!row.ready) engine.toMaterialize.add(row.name as string);
    }
    engine.materializations.start();
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
      const batch = await this.resolveIdentities();
      await this.connection.run('UPDATE events SET svc_id = segment_ids.svc_id FROM segment_ids WHERE events.ingest_seq = segment_ids.seq');
      await this.persistIdentities(batch);
      await this.connection.run('DELETE FROM profiles');
      await this.connection.run('DELETE FROM profile_versions');
      await this.applyUserProfiles(0);
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

  private async rows(sql: string, values?: SqlValue[]): Promise<Row[]> {
    const reader = await this.connection.runAndReadAll(sql, values as (string | number)[]);
    return reader.getRowObjectsJS() as Row[];
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
      const batch = await this.resolveIdentities();
      const materialized = [...this.propertyColumns];
      await this.connection.run(
        `INSERT INTO events (${columnList}, seq, svc_id, ingest_seq${materialized.map(([, { column }]) => `, ${quote(column)}`).join('')})
         SELECT ${segmentColumnList}, s.seq, i.svc_id, s.seq + ${this.lastIngestSeq}${materialized.map(([name]) => `, ${eventPropertyText('s.event_properties', name)}`).join('')}
         FROM segment s LEFT JOIN segment_ids i USING (seq) WHERE s.held_attribution IS NULL`,
      );
      const events = await this.segmentTimelineEvents(this.lastIngestSeq);
      await this.persistIdentities(batch);
      await this.applyAttributionHolds();
      await this.applyUserProfiles(this.lastIngestSeq);
      await this.applyGroupProfiles();
      await this.connection.run('INSERT INTO loaded_segments VALUES (?, ?)', [name, Date.now()]);
      const [last] = await this.rows('SELECT coalesce(max(seq), 0) AS last FROM segment');
      await this.connection.run('DROP TABLE segment');
      const { merges } = batch.changes();
      return () => {
        batch.commit();
        this.lastIngestSeq += Number(last!.last);
        this.changeTimelines({ events, merges });
      };
    });
  }

  /** The events of `segment` as the load inserted them, for the timelines (the rows reporting scans: with a user and a time). */
  private async segmentTimelineEvents(ingestSeqBase: number): Promise<TimelineChange['events']> {
    const events: TimelineChange['events'] = { appIds: [], svcIds: [], times: [], types: [], seqs: [] };
    const result = await this.connection.stream(
      `SELECT s.app_id, i.svc_id::DOUBLE, s.time::DOUBLE, s.event_type, (s.seq + ${ingestSeqBase})::DOUBLE FROM segment s JOIN segment_ids i USING (seq)
       WHERE s.held_attribution IS NULL AND i.svc_id IS NOT NULL AND s.time IS NOT NULL ORDER BY s.seq`,
    );
    await eachRow(result, ([appId, svcId, time, type, seq], row) => {
      events.appIds.push(appId!.getItem(row) as number);
      events.svcIds.push(svcId!.getItem(row) as number);
      events.times.push(time!.getItem(row) as number);
      events.types.push(type!.getItem(row) as string | null);
      events.seqs.push(seq!.getItem(row) as number);
    });
    return events;
  }

  /** A committed change of events, on the timelines (and recorded for the build that runs, if any). */
  private changeTimelines(change: TimelineChange): void {
    this.changesDuringBuild?.push(change);
    this.applyTimelineChange(change, (appId) => !this.unbuilt.has(appId));
  }

  /** The change's events of the projects `kept`, then its merges (in the order of the load's SQL). */
  private applyTimelineChange({ events, merges }: TimelineChange, kept: (appId: number) => boolean): void {
    for (let i = 0; i < events.appIds.length; i++) {
      if (kept(events.appIds[i]!)) this.timelines.append(events.appIds[i]!, events.svcIds[i]!, events.times[i]!, events.types[i]!, events.seqs[i]!);
    }
    for (const { from, to } of merges) this.timelines.merge(from, to);
  }

  /** After a change of a project's events the timelines cannot follow: built again from the table. */
  private forgetTimelines(appId: number): void {
    this.timelines.forget(appId);
    this.unbuilt.add(appId);
    this.forgottenDuringBuild?.add(appId);
    this.timelineBuilds.start();
  }

  /**
   * The timelines of the projects to build, from a snapshot of the events ordered by user, time
   * and ingestion, read in columnar chunks while loads go on: the snapshot is taken between two
   * loads, and the loads committed after it are replayed on what it built.
   */
  private async buildRound(): Promise<void> {
    const appIds = [...this.unbuilt];
    const builders = new Map(appIds.map((appId) => [appId, { builder: new TimelineBuilder(), typeIds: new Map<number, number>() }]));
    const changes: TimelineChange[] = [];
    const forgotten = new Set<number>();
    const ofProjects = `app_id IN (${appIds.join(', ')})`;
    let names: (string | null)[] = [];
    let result: DuckDBResult | undefined;
    await this.serial(async () => {
      await this.builder.run('BEGIN TRANSACTION');
      try {
        names = (await this.builder.runAndReadAll(`SELECT DISTINCT event_type FROM events WHERE ${ofProjects} AND event_type IS NOT NULL`)).getRowObjectsJS().map((row) => row.event_type as string);
        // Event types as numbers (a join on the list of names): reading 10M strings took half again as long.
        result = await this.builder.stream(
          `SELECT e.app_id, e.svc_id::DOUBLE, e.time::DOUBLE, t.id::INTEGER, e.ingest_seq::DOUBLE FROM events e
           LEFT JOIN (SELECT unnest(range(len(l))) AS id, unnest(l) AS name FROM (SELECT ?::VARCHAR[] AS l)) t ON t.name = e.event_type
           WHERE e.${ofProjects} AND e.svc_id IS NOT NULL AND e.time IS NOT NULL ORDER BY e.svc_id, e.time, e.ingest_seq`,
          [JSON.stringify(names)],
        );
      } catch (error) {
        await this.builder.run('ROLLBACK');
        throw error;
      }
      this.changesDuringBuild = changes;
      this.forgottenDuringBuild = forgotten;
    });
    try {
      await eachRow(
        result!,
        ([appId, svcId, time, type, seq], row) => {
          const { builder, typeIds } = builders.get(appId!.getItem(row) as number)!;
          const nameId = (type!.getItem(row) as number | null) ?? -1;
          let typeId = typeIds.get(nameId);
          if (typeId === undefined) typeIds.set(nameId, (typeId = builder.project.typeId(names[nameId] ?? null)));
          builder.add(svcId!.getItem(row) as number, time!.getItem(row) as number, typeId, seq!.getItem(row) as number);
        },
        () => this.closing,
      );
      if (this.closing) return;
      const built = new Set(appIds.filter((appId) => !forgotten.has(appId)));
      for (const appId of built) {
        this.timelines.install(appId, builders.get(appId)!.builder.finish());
        this.unbuilt.delete(appId);
      }
      for (const change of changes) this.applyTimelineChange(change, (appId) => built.has(appId));
    } finally {
      this.changesDuringBuild = undefined;
      this.forgottenDuringBuild = undefined;
      await this.builder.run('ROLLBACK');
    }
  }

  /** A plain funnel from the project's timelines; undefined while they are not built. */
  async timelineFunnel(query: TimelineFunnelQuery): Promise<FunnelGroup[] | undefined> {
    if (this.unbuilt.has(query.appId)) return undefined;
    return timelineFunnel(this.timelines.project(query.appId), query, this.funnelThread);
  }

  /** Plain counts from the project's timelines; undefined while they are not built. */
  async timelineCounts(query: TimelineCountsQuery): Promise<TimelineCounts | undefined> {
    if (this.unbuilt.has(query.appId)) return undefined;
    return timelineCounts(this.timelines.project(query.appId), query);
  }

  timelinesBuilt(): Promise<void> {
    return this.timelineBuilds.ended();
  }

  materializeEventProperties(names: readonly string[]): Promise<void> {
    for (const name of names) if (!this.propertyColumns.get(name)?.ready) this.toMaterialize.add(name);
    if (this.toMaterialize.size > 0) this.materializations.start();
    return Promise.resolve();
  }

  /** Resolves once the properties noted so far are materialized (or a fill failed). */
  propertiesMaterialized(): Promise<void> {
    return this.materializations.ended();
  }

  /**
   * Adds the property's column (from then on loads fill it for the events they insert), fills it
   * for the events before, a chunk per transaction in turn with the loads and other writes (a
   * 10M-event fill in one would hold them all that time), and only then marks it ready: the
   * dialect reads a column once every event has its value.
   */
  private async materializeProperty(name: string): Promise<void> {
    let property = this.propertyColumns.get(name);
    let filledUntil = this.lastIngestSeq;
    if (!property && this.propertyColumns.size >= MAX_PROPERTY_COLUMNS) return;
    if (!property) {
      // Column names are the engine's own: the property's name is user data.
      const column = `mp_${this.propertyColumns.size + 1}`;
      await this.transaction(async () => {
        await this.connection.run(`ALTER TABLE events ADD COLUMN ${quote(column)} VARCHAR`);
        await this.connection.run('INSERT INTO materialized_properties VALUES (?, ?, false)', [name, column]);
        return () => {
          this.propertyColumns.set(name, (property = { column, ready: false }));
          filledUntil = this.lastIngestSeq;
        };
      });
    }
    const { column } = property!;
    for (let from = 0; from < filledUntil; from += FILL_CHUNK) {
      if (this.closing) return;
      await this.transaction(async () => {
        await this.connection.run(`UPDATE events SET ${quote(column)} = ${eventPropertyText('event_properties', name)} WHERE ingest_seq > ? AND ingest_seq <= ?`, [from, Math.min(from + FILL_CHUNK, filledUntil)]);
      });
    }
    await this.transaction(async () => {
      await this.connection.run('UPDATE materialized_properties SET ready = true WHERE name = ?', [name]);
      return () => {
        property!.ready = true;
      };
    });
  }

  /** Holds start before they end: a hold and its release can share a segment. */
  private async applyAttributionHolds(): Promise<void> {
    await this.connection.run(
      `INSERT INTO held_attributions SELECT held_attribution->>'id', CAST(held_attribution->>'app_id' AS INTEGER), CAST(held_attribution->>'received_at' AS BIGINT), held_attribution->'event'
       FROM segment WHERE held_attribution IS NOT NULL ORDER BY seq`,
    );
    await this.connection.run('DELETE FROM held_attributions WHERE id IN (SELECT released_attribution FROM segment WHERE released_attribution IS NOT NULL)');
  }

  /**
   * The `svc_id` of every event row of the temp table `segment` (in `seq` order), into the
   * temp table `segment_ids (seq, svc_id)`; merged ids are already replaced by their target.
   */
  private async resolveIdentities(): Promise<IdentityBatch> {
    const batch = this.identities.begin();
    const seqs: number[] = [];
    const svcIds: (number | null)[] = [];
    const result = await this.connection.stream('SELECT seq::BIGINT, app_id, user_id, device_id FROM segment WHERE held_attribution IS NULL ORDER BY seq');
    const slice = timeSlicer();
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      const [seq, appId, userId, deviceId] = chunk.getColumns() as [bigint[], number[], (string | null)[], (string | null)[]];
      for (let row = 0; row < chunk.rowCount; row++) {
        seqs.push(Number(seq[row]));
        svcIds.push(batch.resolve(appId[row]!, userId[row]!, deviceId[row]!));
        await slice(row);
      }
      await yieldToEventLoop();
    }
    await this.connection.run('CREATE OR REPLACE TEMP TABLE segment_ids (seq BIGINT, svc_id BIGINT)');
    const appender = await this.connection.createAppender('segment_ids', 'main', 'temp');
    await appendAll(appender, seqs, (seq, row) => {
      const svcId = svcIds[row]!;
      appender.appendBigInt(BigInt(seq));
      if (svcId === null) appender.appendNull();
      else appender.appendBigInt(BigInt(batch.canonical(svcId)));
    });
    return batch;
  }

  /** Writes a batch's identity changes; merged ids are replaced in the events and profiles stored before. */
  private async persistIdentities(batch: IdentityBatch): Promise<void> {
    const { users, devices, merges } = batch.changes();
    const fill = async (table: string, columns: string, rows: (string | number | null)[][]) => {
      // Most user mappings change no identity: creating the three temp tables anyway cost them about a third.
      if (rows.length === 0) return;
      await this.connection.run(`CREATE OR REPLACE TEMP TABLE ${table}_changes AS SELECT * FROM ${table} LIMIT 0`);
      const appender = await this.connection.createAppender(`${table}_changes`, 'main', 'temp');
      await appendAll(appender, rows, (row) => {
        for (const value of row) {
          if (value === null) appender.appendNull();
          else if (typeof value === 'number') appender.appendBigInt(BigInt(value));
          else appender.appendVarchar(value);
        }
      });
      await this.connection.run(`INSERT OR REPLACE INTO ${table} (${columns}) SELECT ${columns} FROM ${table}_changes`);
    };
    await fill('identity_users', 'app_id, user_id, svc_id', users.map((u) => [u.appId, u.userId, u.svcId]));
    await fill('identity_devices', 'app_id, device_id, svc_id, owner', devices.map((d) => [d.appId, d.deviceId, d.svcId, d.owner]));
    await fill('svc_merges', 'from_svc, to_svc', merges.map((m) => [m.from, m.to]));
    if (merges.length === 0) return;
    await this.connection.run('UPDATE events SET svc_id = m.to_svc FROM svc_merges_changes m WHERE events.svc_id = m.from_svc');
    await this.connection.run('UPDATE profile_versions SET svc_id = m.to_svc FROM svc_merges_changes m WHERE profile_versions.svc_id = m.from_svc');
    // The user's own profile wins; a user without one takes the merged device's.
    await this.connection.run(
      `INSERT INTO profiles SELECT p.app_id, m.to_svc, p.properties, p.updated_at FROM profiles p JOIN svc_merges_changes m ON p.svc_id = m.from_svc
       WHERE NOT EXISTS (SELECT 1 FROM profiles q WHERE q.app_id = p.app_id AND q.svc_id = m.to_svc)`,
    );
    await this.connection.run('DELETE FROM profiles WHERE svc_id IN (SELECT from_svc FROM svc_merges_changes)');
  }

  /** Applies the `$identify` rows of `segment` (joined to their ids) in order: one profile version each. */
  private async applyUserProfiles(ingestSeqBase: number): Promise<void> {
    const rows = await this.rows(
      `SELECT s.app_id, i.svc_id, s.user_properties, s.time, s.seq FROM segment s JOIN segment_ids i USING (seq)
       WHERE s.event_type = '$identify' AND s.user_properties IS NOT NULL AND NOT coalesce(s.skip_user_properties_sync, false) AND i.svc_id IS NOT NULL ORDER BY s.seq`,
    );
    const updates = rows.map((row) => ({
      key: `${row.app_id}\u0000${row.svc_id}`,
      appId: row.app_id as number,
      svcId: Number(row.svc_id),
      seq: Number(row.seq),
      operations: JSON.parse(row.user_properties as string) as Properties,
      time: Number(row.time),
    }));
    const prior = new Map<string, Properties>();
    for (const { key, appId, svcId } of updatedProfiles(updates)) {
      const [stored] = await this.rows('SELECT properties FROM profiles WHERE app_id = ? AND svc_id = ?', [appId, svcId]);
      if (stored) prior.set(key, JSON.parse(stored.properties as string) as Properties);
    }
    const { profiles, versions } = foldProfiles(updates, (key) => prior.get(key));
    await this.connection.run('CREATE OR REPLACE TEMP TABLE versions_changes AS SELECT * FROM profile_versions LIMIT 0');
    const appender = await this.connection.createAppender('versions_changes', 'main', 'temp');
    await appendAll(appender, versions, ({ update, properties }) => {
      appender.appendInteger(update.appId);
      appender.appendBigInt(BigInt(update.svcId));
      appender.appendBigInt(BigInt(update.seq + ingestSeqBase));
      appender.appendVarchar(JSON.stringify(properties));
    });
    await this.connection.run('INSERT INTO profile_versions SELECT * FROM versions_changes');
    for (const { properties, last } of profiles.values()) {
      await this.connection.run('INSERT OR REPLACE INTO profiles VALUES (?, ?, ?, ?)', [last.appId, last.svcId, JSON.stringify(properties), last.time]);
    }
  }

  /** Applies the `$groupidentify` rows of `segment` in order. */
  private async applyGroupProfiles(): Promise<void> {
    const rows = await this.rows(
      `SELECT app_id, groups, group_properties, time FROM segment
       WHERE event_type = '$groupidentify' AND groups IS NOT NULL AND group_properties IS NOT NULL ORDER BY seq`,
    );
    const updates = rows.flatMap((row) => {
      const appId = row.app_id as number;
      const operations = JSON.parse(row.group_properties as string) as Properties;
      return groupsOf(JSON.parse(row.groups as string) as Record<string, string | string[]>).map((group) => ({ key: groupProfileKey(appId, group), appId, group, operations, time: Number(row.time) }));
    });
    const prior = new Map<string, Properties>();
    for (const { key, appId, group } of updatedProfiles(updates)) {
      const [stored] = await this.rows('SELECT properties FROM group_profiles WHERE app_id = ? AND group_type = ? AND group_value = ?', [appId, group.group_type, group.group_value]);
      if (stored) prior.set(key, JSON.parse(stored.properties as string) as Properties);
    }
    for (const { properties, last } of foldProfiles(updates, (key) => prior.get(key)).profiles.values()) {
      await this.connection.run('INSERT OR REPLACE INTO group_profiles VALUES (?, ?, ?, ?, ?)', [last.appId, last.group.group_type, last.group.group_value, JSON.stringify(properties), last.time]);
    }
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

  /**
   * Rows of a reporting query (numbers as numbers), converted a chunk at a time: a result of
   * tens of thousands of rows converted at once held the event loop for tens of ms.
   */
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
        await this.persistIdentities(batch);
        await this.entities.applyUserMappings(rows, this.direct);
        const { merges } = batch.changes();
        return () => {
          batch.commit();
          this.changeTimelines({ events: { appIds: [], svcIds: [], times: [], types: [], seqs: [] }, merges });
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
      for (const table of ['events', 'profiles', 'profile_versions', 'cohort_members', 'identity_users']) {
        await this.connection.run(`DELETE FROM ${table} WHERE app_id = ? AND ${IN_USERS}`, [appId, users]);
      }
      await this.entities.recordScrub(appId, day, svcIds, today, this.direct);
      return () => {
        this.identities.forget(appId, new Set(svcIds));
        this.forgetTimelines(appId);
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
    await this.timelineBuilds.ended().catch(() => undefined);
    await this.materializations.ended().catch(() => undefined);
    await this.funnelThread.close();
    return this.serial(async () => {
      await this.connection.run('CHECKPOINT');
      this.builder.closeSync();
      this.readers.close();
      this.connection.closeSync();
      this.instance.closeSync();
    });
  }
}
