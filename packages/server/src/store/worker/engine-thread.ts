// The storage engine in a worker thread: loading segments (JSON parsing, identity resolution,
// appenders or RowBinary encoding) and materializing results held the HTTP thread for
// 180-750 ms per 50k-event segment. This thread keeps HTTP, the journal and the insert_id
// window; the engine answers through proxies with the engine's interfaces.
import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { EngineConfig, OpenedEngine, ServerEngine } from '../open-engine.js';
import { deserializeError, type MethodKinds, remote, remoteSession, RpcClient, type Startup } from './rpc.js';

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

/**
 * Opens the engine in its own thread. A thread that dies fails every pending and later call
 * (and is logged) instead of leaving the server waiting.
 */
export async function openEngineThread(config: EngineConfig, log: (message: string) => void): Promise<OpenedEngine> {
  const worker = new Worker(WORKER_ENTRY, { workerData: config });
  const client = new RpcClient(worker);
  let closing = false;
  const started = new Promise<void>((ready, failed) => {
    worker.once('message', (startup: Startup) => (startup.ready ? ready() : failed(deserializeError(startup.error))));
    worker.once('exit', (code) => failed(new Error(`The storage engine's thread exited with code ${code} while opening`)));
  });
  worker.on('error', (error) => {
    log(`the storage engine's thread failed: ${error.stack ?? error.message}`);
    client.fail(new Error(`The storage engine's thread failed: ${error.message}`));
  });
  worker.on('exit', (code) => {
    if (!closing) log(`the storage engine's thread exited (code ${code})`);
    client.fail(new Error(`The storage engine's thread exited (code ${code})`));
  });
  try {
    await started;
  } catch (error) {
    closing = true;
    await worker.terminate();
    throw error;
  }
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
    async close() {
      closing = true;
      try {
        await client.call('thread', 'close', []);
      } finally {
        await worker.terminate();
      }
    },
  };
  return { engine, entitySql: remoteSession(client, 'entitySql'), close: async () => undefined };
}
