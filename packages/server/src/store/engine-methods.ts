// Every engine method, once: how it crosses to the engine's process (worker/engine-process.ts)
// and whether JournalledStore answers it itself (journalled-store.ts), both generated from this
// table. The compiler checks it against the interfaces: a method missing, one too many, a
// stream crossing as a call or a store answer for a method `Engine` lacks does not compile.
// Adding an engine method: the interface, an entry here, the two engines.
import type { ServerEngine } from './open-engine.js';
import type { Engine } from './types.js';
import type { MethodKinds } from './worker/rpc.js';

/** The engine's methods that cross to its process: all but its SQL session (its own proxy), `query` (built on `queryChunks`) and `close`. */
export type EngineCalls = Omit<ServerEngine, 'sql' | 'query' | 'close'>;

/**
 * How JournalledStore answers one of the engine's methods: `store` as the engine does, `store
 * after flush` once the journal appended so far is loaded (reads of what was appended). A method
 * without it is the journal's own business (loading) or reached through the store's `entities`.
 */
export type StoreAnswer = 'store' | 'store after flush';

/**
 * A table of the methods of `T`, each with how it crosses (`call` or `stream`), then how the
 * store answers it when it does (only a method of `Engine`): `'call'`, `'stream, store'`, ...
 */
export type MethodTable<T> = { [K in keyof MethodKinds<T>]: MethodKinds<T>[K] | (K extends keyof Engine ? `${MethodKinds<T>[K]}, ${StoreAnswer}` : never) };

export const ENGINE_METHODS = {
  loadSegment: 'call',
  isLoaded: 'call',
  recentInsertIds: 'stream, store',
  knownAdvertisingIds: 'call, store after flush',
  heldAttributions: 'call, store after flush',
  events: 'call, store after flush',
  userProfile: 'call, store after flush',
  groupProfile: 'call, store after flush',
  // Reporting reads what is loaded: it does not wait for the journal.
  queryChunks: 'stream, store',
  timelineFunnel: 'call, store',
  timelineCounts: 'call, store',
  timelinesBuilt: 'call, store',
  materializeEventProperties: 'call, store',
  propertiesMaterialized: 'call, store',
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
  exportHours: 'call',
  // The Export API pulls one chunk at a time: an export never crosses whole.
  exportLines: 'stream',
} as const satisfies MethodTable<EngineCalls>;

type Table = typeof ENGINE_METHODS;
type Answered = { [K in keyof Table]: Table[K] extends `${string}, ${StoreAnswer}` ? K : never }[keyof Table] & keyof Engine;

/** The engine's methods JournalledStore answers itself, typed as the engine's. */
export type StorePassThroughs = Pick<Engine, Answered>;

/** An entry's parts: how the method crosses, how the store answers it (if it does). */
const entries = Object.entries(ENGINE_METHODS).map(([name, entry]) => {
  const [rpc, store] = entry.split(', ') as ['call' | 'stream', StoreAnswer | undefined];
  return { name, rpc, store };
});

/** How each method crosses, as `remote` takes it. */
export const ENGINE_RPC_KINDS = Object.fromEntries(entries.map(({ name, rpc }) => [name, rpc])) as MethodKinds<EngineCalls>;

type Callable = Record<string, (...args: unknown[]) => unknown>;

/**
 * The methods of `StorePassThroughs` on `engine`, looked up at each call (tests wrap engines in
 * proxies); those answered `store after flush` after `flush`.
 */
export function storePassThroughs(engine: Engine, flush: () => Promise<void>): StorePassThroughs {
  const methods: Callable = {};
  for (const { name, store } of entries) {
    if (store === undefined) continue;
    const call = (...args: unknown[]) => (engine as unknown as Callable)[name]!(...args);
    methods[name] = store === 'store after flush' ? (...args) => flush().then(() => call(...args)) : call;
  }
  return methods as unknown as StorePassThroughs;
}
