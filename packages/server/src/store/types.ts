// The storage interface the handlers see. An engine (DuckDB today) implements `Engine`;
// `JournalledStore` puts the durable journal in front of any engine.
import type { FunnelGroup } from '../model/funnel-times.js';
import type { TimelineCounts, TimelineCountsQuery } from './timelines/counts.js';
import type { TimelineFunnelQuery } from './timelines/funnel.js';

export type { LoadedEvent, PropertyOperations, StoredEvent } from '../model/events.js';
import type { LoadedEvent, StoredEvent } from '../model/events.js';

/**
 * An attribution held until an event with one of its advertising or vendor ids arrives
 * (the attribution as received, without the ingestion rules applied yet).
 */
export interface HeldAttribution {
  id: string;
  app_id: number;
  received_at: number;
  event: Record<string, unknown>;
}

/**
 * One journal line: an event; an event that attaches a held attribution (the hold ends in
 * the same line, so a crash never keeps one without the other); or an attribution held.
 */
export type JournalRecord = StoredEvent | (StoredEvent & { released_attribution: string }) | { held_attribution: HeldAttribution };

/** The advertising and vendor ids that attribution matches on (doc 002). */
export const ADVERTISING_ID_FIELDS = ['idfa', 'idfv', 'adid', 'android_app_set_id'] as const;
export type AdvertisingIdField = (typeof ADVERTISING_ID_FIELDS)[number];

/** Whether an event carries any of them (written out: it runs for every accepted event). */
export const carriesAdvertisingId = (event: StoredEvent): boolean =>
  event.idfa !== null || event.idfv !== null || event.adid !== null || event.android_app_set_id !== null;

/** `[app_id, insert_id, server_upload_time]` of an events row. */
export const insertIdOf = (row: Record<string, unknown>): [number, string, number] => [Number(row.app_id), row.insert_id as string, Number(row.server_upload_time)];

/** Who carried an advertising or vendor id last, and when. */
export interface KnownAdvertisingId {
  app_id: number;
  field: AdvertisingIdField;
  value: string;
  user_id: string | null;
  device_id: string | null;
  seen_at: number;
}

export interface GroupKey {
  group_type: string;
  group_value: string;
}

/** A stored feedback item with its conversation parts (in the order first received). */
export interface StoredFeedbackItem {
  unique_id: string;
  body: string | null;
  author: string | null;
  email: string | null;
  user_id: string | null;
  url: string | null;
  created_at: string;
  conversation_parts: StoredConversationPart[];
}

export interface StoredConversationPart {
  unique_id: string;
  body: string;
  author: string | null;
  email: string | null;
  user_id: string | null;
  url: string | null;
  created_at: string;
}

/** An item to upsert: absent fields keep their stored values; parts are upserted by unique_id. */
export type FeedbackUpsert = Partial<Omit<StoredFeedbackItem, 'unique_id' | 'conversation_parts'>> & {
  unique_id: string;
  conversation_parts?: (Partial<StoredConversationPart> & { unique_id: string; body: string })[];
};

export type SqlValue = string | number | boolean | null;

/**
 * SQL on the engine for the entities of an interface group (annotations, ...), which keep
 * their own tables next to the events: each call runs in turn with the engine's other work.
 */
export interface SqlSession {
  rows(sql: string, values?: SqlValue[]): Promise<Record<string, unknown>[]>;
  run(sql: string, values?: SqlValue[]): Promise<void>;
  /**
   * `work` in one transaction (its statements through the session it is given). It may run
   * more than once (a conflict with another process's transaction): it must not act but
   * through that session.
   */
  transaction<T>(work: (session: Omit<SqlSession, 'transaction'>) => Promise<T>): Promise<T>;
}

/** A change of a cohort's members: these users join (`add`) or leave it. */
export interface CohortMembershipChange {
  add: boolean;
  svcIds: readonly number[];
}

/**
 * Cohort memberships, kept by the engine: reporting reads them with the events and the
 * deletion scrub removes deleted users from them.
 */
export interface CohortMembers {
  /** The cohort's members become `svcIds`, in one transaction. */
  replaceCohortMembers(appId: number, cohortId: string, svcIds: readonly number[]): Promise<void>;
  /** Applies the changes in order, in one transaction. */
  changeCohortMembers(appId: number, cohortId: string, changes: readonly CohortMembershipChange[]): Promise<void>;
  cohortMembers(appId: number, cohortId: string): Promise<number[]>;
  /** The number of members of each of the project's cohorts that has any. */
  cohortSizes(appId: number): Promise<Map<string, number>>;
}

/** What the engine knows of users, for the cohort files. */
export interface UserData {
  /** The profile properties of those of `svcIds` that have a profile. */
  profileProperties(appId: number, svcIds: readonly number[]): Promise<Map<number, Record<string, unknown>>>;
  /** For each of `svcIds` with events: the values of `columns` (name → events column) in its latest event by time. */
  latestEventValues(appId: number, svcIds: readonly number[], columns: ReadonlyMap<string, string>): Promise<Map<number, Map<string, unknown>>>;
}

/** A project's loaded events for streaming, in ingestion order (`ingest_seq`). */
export interface StreamedEventsQuery {
  appId: number;
  /** `ingest_seq` range: after `afterSeq`, up to `untilSeq`. */
  afterSeq: number;
  untilSeq: number;
  /** Only events received (server_upload_time) from then (ms). */
  since: number;
  /** Only events of these types (all when absent). */
  eventTypes?: readonly string[];
  limit: number;
}

/** The engine's loaded events as the event streamer reads them. */
export interface StreamedEvents {
  /** The `ingest_seq` up to which the project's events are all loaded (0 when none). */
  loadedIngestSeq(appId: number): Promise<number>;
  /** The identified events of the query, in ingestion order. */
  streamedEvents(query: StreamedEventsQuery): Promise<{ ingestSeq: number; serverUploadTime: number }[]>;
  /** The events as stored (JSON objects with `svc_id`), in ingestion order; scrubbed events are gone. */
  eventsBySeq(ingestSeqs: readonly number[]): Promise<Record<string, unknown>[]>;
}

/** An hour of server upload time with events of a project (for the Export API). */
export interface ExportHourSummary {
  /** Its start, ms since the epoch. */
  hourMs: number;
  events: number;
  /** The length of the events' JSON columns as text, bytes. */
  jsonBytes: number;
}

/** The stored events as the Export API reads them: by server upload time, a project at a time. */
export interface ExportedEvents {
  /** The hours of [fromMs, toMs) that have events of the project, in order. */
  exportHours(appId: number, fromMs: number, toMs: number): Promise<ExportHourSummary[]>;
  /**
   * The project's events of [fromMs, toMs) as export lines (store/export-lines.ts), by server
   * upload time, a chunk at a time: each text holds whole lines, each ending with a newline.
   */
  exportLines(appId: number, fromMs: number, toMs: number): AsyncIterable<string>;
}

/** One user mapping: `userId` counts as `globalUserId`; null unmaps. */
export interface UserMappingChange {
  userId: string;
  globalUserId: string | null;
}

/** A requested user's mappings in one project; undefined when the user is not known there. */
export interface UserMappingView {
  svcId: number;
  mappedFrom: { svcId: number; userId: string }[];
  mappedTo: { svcId: number; userId: string }[];
}

/** A user in a deletion job. */
export interface DeletionEntry {
  svcId: number;
  requester: string | null;
  requestedOnDay: string;
}

export interface DeletionJobRecord {
  appId: number;
  day: string;
  scrubbedOn: string | null;
  entries: DeletionEntry[];
}

// The entities other than events (deletion jobs, user mappings, feedback), written straight
// to the engine, one interface per interface group: a group's handlers see their own methods
// only, the engines implement them all (`Engine`).

/** Users looked up by their ids in a project, from the engine's identities (cohorts, deletion, session replays). */
export interface UserLookups {
  /** Of these `svc_id`s, the ones with data (events) in the project. */
  svcIdsWithData(appId: number, svcIds: number[]): Promise<Set<number>>;
  /** The `svc_id`s of those of `userIds` known in the project (users with data). */
  svcIdsOfUsers(appId: number, userIds: readonly string[]): Promise<Map<string, number>>;
  /** The user IDs of those of `svcIds` that have one in the project. */
  userIdsOfSvcIds(appId: number, svcIds: readonly number[]): Promise<Map<number, string>>;
  /** The `svc_id`s of those of `deviceIds` whose events are loaded (a device's user's once it sent a `user_id`). */
  svcIdsOfDevices(appId: number, deviceIds: readonly string[]): Promise<Map<string, number>>;
}

/** The deletion group's jobs, with the lookups its requests name users by. */
export interface DeletionStore extends Pick<UserLookups, 'svcIdsWithData' | 'svcIdsOfUsers' | 'userIdsOfSvcIds'> {
  /** The project's job that is still open for requests (its day after `today`), if any. */
  stagingDeletionJob(appId: number, today: string): Promise<string | undefined>;
  /** Adds entries to the job of `day` (created if new); an entry already there is kept. */
  addDeletionEntries(appId: number, day: string, entries: DeletionEntry[]): Promise<void>;
  deletionJobs(appId: number, fromDay: string, toDay: string): Promise<DeletionJobRecord[]>;
  /** Removes an entry; false when the job has no such entry. */
  removeDeletionEntry(appId: number, day: string, svcId: number): Promise<boolean>;
  /** The devices of a job's users (their own and those joined to them), while the job is not scrubbed. */
  devicesOfDeletionJob(appId: number, day: string): Promise<string[]>;
  /** Jobs whose day has come and that are not scrubbed yet, of every project. */
  dueDeletionJobs(today: string): Promise<{ appId: number; day: string }[]>;
  /**
   * Removes every trace of the job's users (events, profiles, identities, mappings, cohort
   * memberships) and records the scrub, in one transaction.
   */
  scrubDeletionJob(appId: number, day: string, today: string): Promise<void>;
}

/** The user mapping group's mappings. */
export interface UserMappingStore {
  /**
   * Applies mappings in every project of `appIds` (the organization's), in one transaction:
   * both users get an `svc_id` there if they have none yet, so that later events join them.
   */
  applyUserMappings(appIds: number[], changes: UserMappingChange[]): Promise<void>;
  userMappings(appId: number, userIds: string[]): Promise<Map<string, UserMappingView>>;
}

/** The feedback group's items. */
export interface FeedbackStore {
  feedbackItem(appId: number, sourceId: string, uniqueId: string): Promise<StoredFeedbackItem | undefined>;
  /** Upserts the items in one transaction; resolves once it is committed (durable). */
  upsertFeedbackItems(appId: number, sourceId: string, items: FeedbackUpsert[], now: string): Promise<void>;
}

/** Read side shared by every engine (what the handlers and the tests query). */
export interface StoreReader {
  /** The project's events in ingestion order. */
  events(appId: number): Promise<LoadedEvent[]>;
  userProfile(appId: number, userId: string): Promise<Record<string, unknown> | undefined>;
  groupProfile(appId: number, group: GroupKey): Promise<Record<string, unknown> | undefined>;
}

/** Reporting's access to an engine: SQL in the engine's dialect, rows back. */
export interface ReportingSource {
  query(sql: string): Promise<Record<string, unknown>[]>;
  /** The rows of a large result a chunk at a time. */
  queryChunks(sql: string): AsyncIterable<Record<string, unknown>[]>;
  /**
   * A plain funnel from the engine's per-user timelines (store/timelines/funnel.ts); undefined
   * when the engine keeps none or they are not built yet for the project (the SQL answers).
   */
  timelineFunnel(query: TimelineFunnelQuery): Promise<FunnelGroup[] | undefined>;
  /** Users or events per bucket of a plain scan from the timelines (store/timelines/counts.ts); undefined as for funnels. */
  timelineCounts(query: TimelineCountsQuery): Promise<TimelineCounts | undefined>;
  /** Resolves once the timelines the engine builds at open (or after a change) are built: funnels read them from then on. */
  timelinesBuilt(): Promise<void>;
  /**
   * Notes that reporting reads these event properties' text: an engine with materialized
   * columns fills one per property in the background (resolves once noted, not filled).
   */
  materializeEventProperties(names: readonly string[]): Promise<void>;
  /** Resolves once the properties noted so far are materialized; rejects when a fill failed (those are read from the JSON). */
  propertiesMaterialized(): Promise<void>;
}

/** What a storage engine provides underneath the journal. */
export interface Engine extends StoreReader, ReportingSource, UserLookups, DeletionStore, UserMappingStore, FeedbackStore {
  /** The SQL session of the engine's entities (DuckDB's own database; PostgreSQL next to ClickHouse). */
  readonly sql: SqlSession;
  /**
   * Loads one sealed journal segment (lines written by `journalLine`) and applies its
   * profile operations, recording the segment as loaded in the same transaction, so that a
   * crash between load and deletion of the file never loads it twice.
   */
  loadSegment(path: string, name: string): Promise<void>;
  isLoaded(name: string): Promise<boolean>;
  /**
   * `[app_id, insert_id, server_upload_time]` of events received since `since` (ms), in chunks:
   * read as one array, a week of ids would hold gigabytes of heap while the server starts.
   */
  recentInsertIds(since: number): AsyncIterable<[number, string, number][]>;
  /** The latest carrier of each advertising or vendor id in events received since `since`. */
  knownAdvertisingIds(since: number): Promise<KnownAdvertisingId[]>;
  /** Attributions held since `since` and not attached yet, oldest first. */
  heldAttributions(since: number): Promise<HeldAttribution[]>;
  close(): Promise<void>;
}

/** The store handlers write to: a 200 answer waits for `append`. */
export interface Store extends StoreReader, ReportingSource {
  /** Entities written straight to the engine (not through the journal); server.ts hands each group its own store of them. */
  readonly entities: UserLookups & DeletionStore & UserMappingStore & FeedbackStore;
  /** Resolves once the records are durable (journal fsynced). */
  append(records: JournalRecord[]): Promise<void>;
  /** `[app_id, insert_id, server_upload_time]` of events received since `since` (ms), in chunks. */
  recentInsertIds(since: number): AsyncIterable<[number, string, number][]>;
  knownAdvertisingIds(since: number): Promise<KnownAdvertisingId[]>;
  heldAttributions(since: number): Promise<HeldAttribution[]>;
  /** Makes everything appended so far visible to the read side. */
  flush(): Promise<void>;
  close(): Promise<void>;
}
