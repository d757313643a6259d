// Starting and stopping a server: data directory, tenancy, store (journal + DuckDB),
// ingestion rules, and the HTTP listeners (one for every host role, or one per role).
import type { FastifyInstance } from 'fastify';
import { loadBundles } from '@svc/openapi-validation';
import { buildApp, type ConnectionLimits } from './http/app.js';
import { CONSOLE_HOST_ROLE, consoleDirectory } from './http/console.js';
import type { Handlers } from './http/operations.js';
import { DEFAULT_EVENT_RULES, type EventRules } from './model/events.js';
import { Throttle, type ThrottleLimits } from './ingestion/throttle.js';
import { AttributionService } from './ingestion/attribution.js';
import { ExperimentService } from './experiment/handlers.js';
import { FeedbackService } from './feedback/handlers.js';
import { IngestionService } from './ingestion/handlers.js';
import { LegacyIngestion } from './ingestion/legacy.js';
import { AnnotationHandlers } from './annotations/handlers.js';
import { AnnotationStore } from './annotations/store.js';
import { CohortHandlers, type ExportScheduler, rejectCohortChange, rejectDownloadLink } from './cohorts/handlers.js';
import { CohortExportLimits, type ExportLimitFigures } from './cohorts/limits.js';
import { CohortStore } from './cohorts/store.js';
import { TaxonomyHandlers, taxonomyRejections } from './taxonomy/handlers.js';
import { StoredEventNames } from './taxonomy/ingested.js';
import { TaxonomyLimits, type TaxonomyLimitFigures } from './taxonomy/limits.js';
import { TaxonomyStore } from './taxonomy/store.js';
import { linkSecret } from './shared/link-secret.js';
import { SignedLinks } from './shared/signed-links.js';
import { ReplayHandlers, rejectReplayFileLink } from './session-replays/handlers.js';
import { ReplayStore } from './session-replays/store.js';
import { DeletionHandlers } from './deletion/handlers.js';
import { ExportHandlers } from './export/handlers.js';
import { DeliveryMetricsHandlers } from './delivery-metrics/handlers.js';
import { MetricsLimits, type MetricsLimitFigures } from './delivery-metrics/limits.js';
import { StreamStore } from './delivery-metrics/store.js';
import { DEFAULT_STREAMING, destinationsOf, EventStreamer, type StreamingOptions } from './delivery-metrics/streamer.js';
import { savedCharts } from './reporting/charts.js';
import { clickHouseDialectOf, duckDbDialectOf, ReportingHandlers } from './reporting/handlers.js';
import { prepareTimeZones } from './model/time.js';
import { InMemoryReportingLimits, type LimitFigures, type ReportingLimits } from './shared/reporting-limits.js';
import { ClickHouseDialect } from './store/clickhouse/dialect.js';
import { DuckDbDialect } from './store/duckdb/dialect.js';
import { type EngineConfig, type OpenedEngine, openEngine } from './store/open-engine.js';
import { openEngineProcess } from './store/worker/engine-process.js';
import type { Lowering } from './store/worker/rpc.js';
import { type MappingRate, UserMappingHandlers } from './usermap/handlers.js';
import { JournalledStore } from './store/journalled-store.js';
import { privateDirectory } from './shared/private-files.js';
import { Tenancy } from './shared/tenancy.js';

// silenceSeconds: the documented advice is to wait about 15 seconds after a 429.
export const DEFAULT_THROTTLE: ThrottleLimits = { epsThreshold: 1000, windowSeconds: 30, dailyLimit: 500_000, silenceSeconds: 15 };

// A 20 MB upload at 2 Mbit/s takes about 80 s; a stalled client is cut off after 30 s idle.
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  requestMs: 120_000,
  headersMs: 15_000,
  idleMs: 30_000,
  keepAliveMs: 5_000,
  checkIntervalMs: 1_000,
  maxConnections: 2_048,
};

// The engine process's priority below the server's: idle, the CPU time the server leaves. With
// a niceness the engine still takes the server's CPU at each of its wake-ups (Linux lets a
// running thread finish its slice), which stalls the server's event loop while queries run.
export const ENGINE_NICE: Lowering = 'idle';

export interface ServerConfig {
  /** This process's own files: the journal (and DuckDB's database). */
  dataDir: string;
  /**
   * Files every server process of one deployment reads (default: dataDir): tenancy, the link
   * secret, saved charts, experiment flags. Processes sharing one engine database (ClickHouse
   * with PostgreSQL) point this at one directory; each keeps its own dataDir. What stays per
   * process: the throttle, the cohort export limits, the user-mapping and deletion request
   * pace, the insert_id window (repeats sent to another process are dropped when its segment
   * loads) and property-update counts; N processes allow up to N times them. The reporting
   * limits (concurrency and cost) are counted in PostgreSQL when `postgresUrl` is given.
   */
  sharedDir?: string;
  host: string;
  /** One listener for every host role on `port`, or one per role (`hostRole → port`). */
  port: number;
  rolePorts?: Record<string, number>;
  throttle?: Partial<ThrottleLimits>;
  rules?: Partial<EventRules>;
  /** How often journal segments are sealed and loaded into DuckDB. */
  loadIntervalMs?: number;
  logger?: boolean;
  /** Current time, ms; `Date.now` unless a test moves time. */
  clock?: () => number;
  /** Runs cohort export jobs; by default right after the request, in the background. */
  cohortExportScheduler?: ExportScheduler;
  /** Cohort files above this size are answered with 302 to a signed link (default 1 MB). */
  cohortInlineFileBytes?: number;
  /** The cohort export limits; the documented ones by default. */
  cohortExportLimits?: ExportLimitFigures;
  connectionLimits?: Partial<ConnectionLimits>;
  /** Origins whose pages may call the groups with CORS policy `configured` (app and api hosts). */
  corsOrigins?: string[];
  /** The reporting limits per project; the documented ones by default. */
  reportingLimits?: LimitFigures;
  /** The taxonomy limits; the documented ones by default. */
  taxonomyLimits?: TaxonomyLimitFigures;
  /** Event streaming: intervals, batch size, retry policy; the documented ones by default. */
  streaming?: Partial<StreamingOptions>;
  /** The delivery metrics limits; the documented ones by default. */
  deliveryMetricsLimits?: MetricsLimitFigures;
  /** User mapping calls allowed per organization in a window; the documented rate by default. */
  userMappingRate?: MappingRate;
  /** Operator-facing messages (quarantined journal records); stderr by default. */
  log?: (message: string) => void;
  /** A line in `log` for every 4xx answer, with its request id (as `svc-server start` does). */
  logClientErrors?: boolean;
  /**
   * PostgreSQL for the entity tables (annotations, cohorts, taxonomy, streaming, replays) and
   * the reporting limits, which several server processes can share; the engine's own tables
   * and the process's memory by default.
   */
  postgresUrl?: string;
  /**
   * Where the events, identities and profiles live: embedded DuckDB in `dataDir` (default),
   * or ClickHouse at `clickhouseUrl`, which needs `postgresUrl` for every other entity.
   */
  engine?: 'duckdb' | 'clickhouse';
  /** ClickHouse's HTTP URL (e.g. `http://127.0.0.1:8123`), with `engine: 'clickhouse'`. */
  clickhouseUrl?: string;
  /** The HTTP URLs of the other replicas of `clickhouseUrl`'s shard: the tables are replicated (ClickHouseOptions.replicaUrls). */
  clickhouseReplicaUrls?: string[];
  /** The replicas of each further shard (ClickHouseOptions.shardUrls), with `clickhouseCluster`. */
  clickhouseShardUrls?: string[][];
  /** The cluster of the servers' remote_servers that lists the shards (ClickHouseOptions.cluster). */
  clickhouseCluster?: string;
  /** Created with the schema when missing; `default` when not given. */
  clickhouseDatabase?: string;
  /**
   * Where the engine runs: its own child process (default), so that loads and large results
   * do not hold the HTTP thread; or this thread (`main`, to compare).
   */
  engineIn?: 'process' | 'main';
  /** How much lower than this process's the engine process's priority is (niceness added, 0-19, or `idle`). */
  engineNice?: Lowering;
  /**
   * Event properties the DuckDB engine materializes in columns from the start (it materializes
   * those reporting queries group by or filter on anyway, from their first query).
   */
  materializedProperties?: string[];
  /** DuckDB's memory limit (its syntax, e.g. `1GB`): its buffer cache grows up to it; DuckDB's default (80% of RAM) when not given. */
  duckdbMemoryLimit?: string;
  /** The most bytes the DuckDB engine's timelines (its in-memory index of events for funnels and counts) may hold; a quarter of RAM when not given. */
  timelineMemoryBytes?: number;
  /** The Export API's size limit, bytes of uncompressed lines (estimated); the platform's 4 GB by default. */
  exportMaxBytes?: number;
  /** The web console's built files (served at /console on the app host); @svc/console's `dist` by default. */
  consoleDir?: string;
}

/** The engine, in its own process unless `engineIn` is `main`. */
function openServerEngine(config: ServerConfig, log: (message: string) => void): Promise<OpenedEngine> {
  const engineConfig: EngineConfig = {
    dataDir: config.dataDir,
    engine: config.engine ?? 'duckdb',
    postgresUrl: config.postgresUrl,
    clickhouseUrl: config.clickhouseUrl,
    clickhouseReplicaUrls: config.clickhouseReplicaUrls,
    clickhouseShardUrls: config.clickhouseShardUrls,
    clickhouseCluster: config.clickhouseCluster,
    clickhouseDatabase: config.clickhouseDatabase,
    insertIdWindowMs: config.rules?.insertIdWindowMs,
    duckdbMemoryLimit: config.duckdbMemoryLimit,
    timelineMemoryBytes: config.timelineMemoryBytes,
  };
  return config.engineIn === 'main' ? openEngine(engineConfig, (message) => log(`storage engine: ${message}`)) : openEngineProcess(engineConfig, config.engineNice ?? ENGINE_NICE, log);
}

/**
 * The reporting limits: in PostgreSQL, counted for every process on it, when configured; else
 * in this process's memory. PostgreSQL's are reached through a pool of this thread: an
 * admission must not wait behind the engine process's work.
 */
async function openReportingLimits(config: ServerConfig, log: (message: string) => void): Promise<{ limits: ReportingLimits; close(): Promise<void> }> {
  if (config.postgresUrl === undefined) return { limits: new InMemoryReportingLimits(config.reportingLimits), close: async () => undefined };
  const [{ postgresSession }, { PostgresReportingLimits }] = await Promise.all([import('./store/postgres/sql-session.js'), import('./store/postgres/reporting-limits.js')]);
  const session = postgresSession(config.postgresUrl, { maxConnections: 4 });
  const limits = new PostgresReportingLimits(session, { figures: config.reportingLimits, log });
  return {
    limits,
    async close() {
      await limits.close();
      await session.close();
    },
  };
}

export interface RunningServer {
  /** Base URL per host role. */
  urls: Record<string, string>;
  /** The web console's page, on the app host (when this server serves that role). */
  consoleUrl: string | undefined;
  tenancy: Tenancy;
  store: JournalledStore;
  ingestion: IngestionService;
  attribution: AttributionService;
  deletion: DeletionHandlers;
  streamer: EventStreamer;
  close(): Promise<void>;
}

const BODY_LIMITS = {
  createBatchEvents: 20 * 1024 * 1024,
  createHttpApiEvents: 20 * 1024 * 1024,
  createLegacySdkEvents: 20 * 1024 * 1024,
  createIdentifications: 20 * 1024 * 1024,
  createFeedbackItems: 5 * 1024 * 1024,
  // 100,000 IDs per request (the documented maximum) fit in a few MB.
  createCohortUpload: 32 * 1024 * 1024,
  createCohortMembershipUpdate: 32 * 1024 * 1024,
  // The SDK splits its batches well below 10 MB and drops one answered with 413.
  createSessionReplayEvents: 10 * 1024 * 1024,
};
const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Every host role of the bundles. */
export function hostRoles(): string[] {
  return [...new Set(loadBundles().map((bundle) => bundle.hostRole))];
}

/** The default port of a region: the one its server entries in the specs name. */
export function defaultPort(region: 'standard' | 'eu'): number {
  const urls = loadBundles().flatMap((bundle) => bundle.servers.filter((server) => server.region === region).map((server) => new URL(server.url)));
  return Number(urls[0]?.port || (region === 'eu' ? 8100 : 8000));
}

export async function startServer(config: ServerConfig): Promise<RunningServer> {
  const sharedDir = config.sharedDir ?? config.dataDir;
  const log = config.log ?? ((message: string) => console.error(message));
  for (const dir of new Set([config.dataDir, sharedDir])) privateDirectory(dir, log);
  const opened = await openServerEngine(config, log);
  const clickhouse = config.engine === 'clickhouse';
  const clock = config.clock ?? Date.now;
  const tenancy = new Tenancy(sharedDir, clock);
  const stopWatching = tenancy.watch();
  prepareTimeZones(new Set(['UTC', ...tenancy.projects.flatMap((project) => project.time_zone ?? [])]));
  const { engine, entitySql } = opened;
  const store = await JournalledStore.open(engine, config.dataDir, {
    loadIntervalMs: config.loadIntervalMs ?? 2000,
    segmentBytes: 64 * 1024 * 1024,
    log,
  });
  await store.materializeEventProperties(config.materializedProperties ?? []);
  const rules = { ...DEFAULT_EVENT_RULES, ...config.rules };
  const attribution = new AttributionService(store, rules);
  const ingestion = new IngestionService(store, new Throttle({ ...DEFAULT_THROTTLE, ...config.throttle }), rules, (events, now) => attribution.observe(events, now));
  await ingestion.rebuildInsertIds(clock());
  await attribution.rebuild(clock());
  const pruner = setInterval(() => {
    ingestion.prune(clock());
    attribution.prune(clock());
    deletion.advance(clock()).catch((error: Error) => log(`scrubbing deletion jobs failed (tried again in a minute): ${error.message}`));
  }, 60_000);
  pruner.unref();

  const feedback = new FeedbackService(store.entities);
  const experiment = new ExperimentService(sharedDir, store, rules);
  const userMapping = new UserMappingHandlers(store.entities, tenancy, config.userMappingRate);

  const annotations = new AnnotationHandlers(new AnnotationStore(entitySql));
  const { limits: reportingLimits, close: closeReportingLimits } = await openReportingLimits(config, log);
  const links = new SignedLinks(linkSecret(sharedDir), clock);
  const taxonomyStore = new TaxonomyStore(entitySql, !clickhouse);
  // The names of events and properties do not depend on the time zone.
  const ingestedNamesDialect = clickhouse ? new ClickHouseDialect() : new DuckDbDialect();
  const taxonomy = new TaxonomyHandlers(taxonomyStore, new TaxonomyLimits(config.taxonomyLimits), new StoredEventNames(store, ingestedNamesDialect));
  const cohorts = new CohortHandlers(new CohortStore(entitySql, opened.engine), store.entities, {
    clock,
    limits: new CohortExportLimits(reportingLimits, config.cohortExportLimits),
    links,
    schedule: config.cohortExportScheduler,
    inlineFileBytes: config.cohortInlineFileBytes,
  });
  const streamStore = new StreamStore(entitySql, engine);
  const streamer = new EventStreamer(streamStore, () => destinationsOf(tenancy), clock, { ...DEFAULT_STREAMING, ...config.streaming }, log);
  streamer.start();
  const deliveryMetrics = new DeliveryMetricsHandlers(streamStore, new MetricsLimits(config.deliveryMetricsLimits), (syncId) => destinationsOf(tenancy).find((d) => d.sync_id === syncId));
  const replayStore = new ReplayStore(entitySql);
  const deletion = new DeletionHandlers(store.entities, store, tenancy, (appId, deviceIds) => replayStore.forgetDevices(appId, deviceIds));
  const replays = new ReplayHandlers(replayStore, { clock, links, svcIdsOfDevices: (appId, deviceIds) => store.entities.svcIdsOfDevices(appId, deviceIds) });
  const reporting = new ReportingHandlers(store, reportingLimits, (appId) => savedCharts(sharedDir, appId), (appId) => taxonomyStore.eventTypeNames(appId), clickhouse ? clickHouseDialectOf(engine) : duckDbDialectOf(engine));
  const legacy = new LegacyIngestion(ingestion);
  const exports = new ExportHandlers(engine, config.exportMaxBytes);
  const handlers: Handlers = {
    createAttributionEvents: attribution.handle,
    getVariants: experiment.getVariants,
    listFlags: experiment.listFlags,
    getSdkVariants: experiment.getSdkVariants,
    listSdkFlags: experiment.listSdkFlags,
    createFeedbackItems: feedback.handle,
    createBatchEvents: ingestion.upload,
    createHttpApiEvents: ingestion.upload,
    createGroupIdentifications: ingestion.groupIdentify,
    createLegacySdkEvents: legacy.upload,
    createIdentifications: legacy.identify,
    getUserCounts: reporting.getUserCounts,
    getSessionLengthDistribution: reporting.getSessionLengthDistribution,
    getAverageSessionLength: reporting.getAverageSessionLength,
    getAverageSessionsPerUser: reporting.getAverageSessionsPerUser,
    getUserComposition: reporting.getUserComposition,
    listEventTypeTotals: reporting.listEventTypeTotals,
    getEventSegmentation: reporting.getEventSegmentation,
    getFunnel: reporting.getFunnel,
    getRetention: reporting.getRetention,
    getUserSearch: reporting.getUserSearch,
    getUserActivity: reporting.getUserActivity,
    getChartCsv: reporting.getChartCsv,
    getChartResults: reporting.getChartResults,
    getRealtimeActiveUsers: reporting.getRealtimeActiveUsers,
    getRevenueLtv: reporting.getRevenueLtv,
    getEventExport: exports.getEventExport,
    createDeletionRequest: deletion.createDeletionRequest,
    listDeletionJobs: deletion.listDeletionJobs,
    deleteDeletionJobEntry: deletion.deleteDeletionJobEntry,
    createUserMappings: userMapping.createUserMappings,
    createAnnotationCategory: annotations.createAnnotationCategory,
    listAnnotationCategories: annotations.listAnnotationCategories,
    getAnnotationCategory: annotations.getAnnotationCategory,
    updateAnnotationCategory: annotations.updateAnnotationCategory,
    deleteAnnotationCategory: annotations.deleteAnnotationCategory,
    updateAnnotationCategoryAssignments: annotations.updateAnnotationCategoryAssignments,
    createAnnotation: annotations.createAnnotation,
    listAnnotations: annotations.listAnnotations,
    getAnnotation: annotations.getAnnotation,
    updateAnnotation: annotations.updateAnnotation,
    deleteAnnotation: annotations.deleteAnnotation,
    getUserMappings: userMapping.getUserMappings,
    listCohorts: cohorts.listCohorts,
    createCohortUpload: cohorts.createCohortUpload,
    createCohortMembershipUpdate: cohorts.createCohortMembershipUpdate,
    getCohortExport: cohorts.getCohortExport,
    getCohortExportStatus: cohorts.getCohortExportStatus,
    getCohortExportFile: cohorts.getCohortExportFile,
    getCohortExportDownload: cohorts.getCohortExportDownload,
    createEventCategory: taxonomy.createEventCategory,
    listEventCategories: taxonomy.listEventCategories,
    getEventCategory: taxonomy.getEventCategory,
    updateEventCategory: taxonomy.updateEventCategory,
    deleteEventCategory: taxonomy.deleteEventCategory,
    createEventType: taxonomy.createEventType,
    listEventTypes: taxonomy.listEventTypes,
    getEventType: taxonomy.getEventType,
    updateEventType: taxonomy.updateEventType,
    deleteEventType: taxonomy.deleteEventType,
    createEventTypeRestoration: taxonomy.createEventTypeRestoration,
    createEventProperty: taxonomy.createEventProperty,
    listEventProperties: taxonomy.listEventProperties,
    getEventProperty: taxonomy.getEventProperty,
    updateEventProperty: taxonomy.updateEventProperty,
    deleteEventProperty: taxonomy.deleteEventProperty,
    createUserProperty: taxonomy.createUserProperty,
    listUserProperties: taxonomy.listUserProperties,
    getUserProperty: taxonomy.getUserProperty,
    updateUserProperty: taxonomy.updateUserProperty,
    deleteUserProperty: taxonomy.deleteUserProperty,
    getDeliveryMetricsSummary: deliveryMetrics.getDeliveryMetricsSummary,
    createSessionReplayEvents: replays.createSessionReplayEvents,
    listSessionReplays: replays.listSessionReplays,
    listSessionReplayFiles: replays.listSessionReplayFiles,
    getSessionReplayFileDownload: replays.getSessionReplayFileDownload,
  };
  const rejections = {
    ...taxonomyRejections(),
    createBatchEvents: ingestion.rejectUpload,
    createHttpApiEvents: ingestion.rejectUpload,
    createFeedbackItems: feedback.reject,
    createCohortUpload: rejectCohortChange('createCohortUpload'),
    createCohortMembershipUpdate: rejectCohortChange('createCohortMembershipUpdate'),
    getCohortExportDownload: rejectDownloadLink,
    getSessionReplayFileDownload: rejectReplayFileLink,
  };
  const connectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...config.connectionLimits };
  const appOptions = {
    tenancy,
    handlers,
    rejections,
    bodyLimits: BODY_LIMITS,
    defaultBodyLimit: DEFAULT_BODY_LIMIT,
    logger: config.logger ?? false,
    log,
    clock,
    connectionLimits,
    corsOrigins: config.corsOrigins ?? [],
    logClientErrors: config.logClientErrors ?? false,
    consoleDir: config.consoleDir ?? consoleDirectory(),
  };

  const listeners: { app: FastifyInstance; roles: string[] }[] = config.rolePorts
    ? Object.keys(config.rolePorts).map((role) => ({ app: buildApp({ ...appOptions, hostRoles: [role] }), roles: [role] }))
    : [{ app: buildApp(appOptions), roles: hostRoles() }];
  const urls: Record<string, string> = {};
  for (const { app, roles } of listeners) {
    const port = config.rolePorts ? config.rolePorts[roles[0]!]! : config.port;
    await app.listen({ host: config.host, port });
    app.server.maxConnections = connectionLimits.maxConnections;
    const address = app.server.address();
    const bound = typeof address === 'object' && address ? address.port : port;
    for (const role of roles) urls[role] = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${bound}`;
  }

  return {
    urls,
    consoleUrl: urls[CONSOLE_HOST_ROLE] && `${urls[CONSOLE_HOST_ROLE]}/console/`,
    tenancy,
    deletion,
    streamer,
    store,
    ingestion,
    attribution,
    async close() {
      clearInterval(pruner);
      stopWatching();
      for (const { app } of listeners) await app.close();
      await closeReportingLimits();
      await streamer.stop();
      await store.close();
      await opened.close();
    },
  };
}
