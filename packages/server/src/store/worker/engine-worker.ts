// The storage engine's thread: opens the engine of `workerData` and answers the server's calls.
import { parentPort, workerData } from 'node:worker_threads';
import { type EngineConfig, openEngine } from '../open-engine.js';
import { serve } from './rpc.js';

void serve(parentPort!, async () => {
  const opened = await openEngine(workerData as EngineConfig);
  const thread = {
    async close() {
      await opened.engine.close();
      await opened.close();
    },
  };
  return new Map<string, object>([
    ['engine', opened.engine],
    ['engineSql', opened.engine.sql],
    ['entitySql', opened.entitySql],
    ['thread', thread],
  ]);
});
