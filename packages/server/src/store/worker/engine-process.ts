// The storage engine in a child process: loading segments (JSON parsing, identity resolution,
// appenders or RowBinary encoding) and materializing results would hold the HTTP thread. In a
// worker thread of this process the HTTP thread still stalls behind it (V8's GC helper threads
// and the mmap lock are per process), and
// a DuckDB statement ending in a dead thread aborted the server. This process keeps HTTP, the
// journal and the insert_id window; the engine answers through proxies with the engine's
// interfaces, at a lower priority. A process that dies is started again (RestartingProcess):
// the journal keeps what it could not load meanwhile.
import { extname } from 'node:path';
import { ENGINE_RPC_KINDS, type EngineCalls } from '../engine-methods.js';
import type { EngineConfig, OpenedEngine, ServerEngine } from '../open-engine.js';
import { RestartingProcess } from './restarting-process.js';
import { type Lowering, remote, remoteSession } from './rpc.js';

/** The child's module: compiled next to this one, or the TypeScript source when run from it (tests). */
const CHILD_ENTRY = new URL(`./engine-child${extname(new URL(import.meta.url).pathname)}`, import.meta.url);

/** The process of each engine opened here, for `killEngineProcess`. */
const processes = new WeakMap<object, RestartingProcess>();

/** Kills the process of `engine` with SIGKILL (tests: what the OOM killer does). */
export async function killEngineProcess(engine: object): Promise<void> {
  const child = processes.get(engine);
  if (!child) throw new Error('Not an engine opened in its own process');
  await child.kill();
}

/**
 * The engine's young generation: a segment's load makes objects a chunk of lines at a time that
 * die young, and a larger young space lets them die without being copied (the server's own
 * 16 MB suits its event loop's pauses, not the loads). docs/performance.md has the figures.
 */
const ENGINE_NODE_FLAGS = ['--max-semi-space-size=64'];

/**
 * Opens the engine in a child process `nice` lower in priority than this one, which is
 * started again (the engine opened again) when it dies.
 */
export async function openEngineProcess(config: EngineConfig, nice: Lowering, log: (message: string) => void): Promise<OpenedEngine> {
  const launch = { entry: CHILD_ENTRY, data: config, nice, nodeFlags: ENGINE_NODE_FLAGS };
  const client = await RestartingProcess.start(launch, (message) => log(`storage engine: ${message}`));
  const methods = remote<EngineCalls>(client, 'engine', ENGINE_RPC_KINDS);
  // The methods not in ENGINE_METHODS.
  const engine: ServerEngine = {
    ...methods,
    sql: remoteSession(client, 'engineSql'),
    // A chunk per message: a large result deserialized at once would hold this thread again.
    async query(sql) {
      const rows: Record<string, unknown>[] = [];
      for await (const chunk of methods.queryChunks(sql)) for (const row of chunk) rows.push(row);
      return rows;
    },
    close: () => client.close((child) => child.call('child', 'close', [])),
  };
  processes.set(engine, client);
  return { engine, entitySql: remoteSession(client, 'entitySql'), close: async () => undefined };
}
