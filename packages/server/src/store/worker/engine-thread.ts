// The storage engine in a worker thread: loading segments (JSON parsing, identity resolution,
// appenders or RowBinary encoding) and materializing results held the HTTP thread for
// 180-750 ms per 50k-event segment. This thread keeps HTTP, the journal and the insert_id
// window; the engine answers through proxies with the engine's interfaces. A thread that dies
// is started again (RestartingWorker): the journal keeps what it could not load meanwhile.
import { extname } from 'node:path';
import type { EngineConfig, OpenedEngine, ServerEngine } from '../open-engine.js';
import { RestartingWorker } from './restarting-worker.js';
import { type MethodKinds, remote, remoteSession } from './rpc.js';

/** The engine's methods and how each crosses; `query` and `close` are built on them below. */
const ENGINE_METHODS: MethodKinds<Omit<ServerEngine, 'sql' | 'query' | 'close'>> = {
  loadSegment: 'call',
  isLoaded: 'call',
  recentInsertIds: 'stream',
  knownAdvertisingIds: 'call',
  heldAttributions: 'call',
  events: 'call',
  userProfile: 'call',
  groupProfile: 'call',
  queryChunks: 'stream',
  timelineFunnel: 'call',
  timelineCounts: 'call',
  timelinesBuilt: 'call',
  svcIdsWithData: 'call',
  svcIdsOfUsers: 'call',
  userIdsOfSvcIds: 'call',
  svcIdsOfDevices: 'call',
  stagingDeletionJob: 'call',
  addDeletionEntries: 'call',
  deletionJobs: 'call',
  removeDeletionEntry: 'call',
  devicesOfDeletionJob: 'call',
  dueDeletionJobs: 'call',
  scrubDeletionJob: 'call',
  applyUserMappings: 'call',
  userMappings: 'call',
  feedbackItem: 'call',
  upsertFeedbackItems: 'call',
  replaceCohortMembers: 'call',
  changeCohortMembers: 'call',
  cohortMembers: 'call',
  cohortSizes: 'call',
  profileProperties: 'call',
  latestEventValues: 'call',
  loadedIngestSeq: 'call',
  streamedEvents: 'call',
  eventsBySeq: 'call',
};

/** The worker's module: compiled next to this one, or the TypeScript source when run from it (tests). */
const WORKER_ENTRY = new URL(`./engine-worker${extname(new URL(import.meta.url).pathname)}`, import.meta.url);

/** The thread of each engine opened here, for `killEngineThread`. */
const threads = new WeakMap<object, RestartingWorker>();

/** Ends the thread of `engine` as a death would (tests: what an uncaught error or running out of heap does). */
export async function killEngineThread(engine: object): Promise<void> {
  const thread = threads.get(engine);
  if (!thread) throw new Error('Not an engine opened in its own thread');
  await thread.kill();
}

/** Opens the engine in its own thread, which is started again (the engine opened again) when it dies. */
export async function openEngineThread(config: EngineConfig, log: (message: string) => void): Promise<OpenedEngine> {
  const client = await RestartingWorker.start(WORKER_ENTRY, config, (message) => log(`storage engine: ${message}`));
  const methods = remote<Omit<ServerEngine, 'sql' | 'query' | 'close'>>(client, 'engine', ENGINE_METHODS);
  const engine: ServerEngine = {
    ...methods,
    sql: remoteSession(client, 'engineSql'),
    // A chunk per message: a large result cloned at once would hold this thread again.
    async query(sql) {
      const rows: Record<string, unknown>[] = [];
      for await (const chunk of methods.queryChunks(sql)) for (const row of chunk) rows.push(row);
      return rows;
    },
    close: () => client.close((thread) => thread.call('thread', 'close', [])),
  };
  threads.set(engine, client);
  return { engine, entitySql: remoteSession(client, 'entitySql'), close: async () => undefined };
}
