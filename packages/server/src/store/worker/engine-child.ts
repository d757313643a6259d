// The storage engine's process: opens the engine of the config its parent sends and answers the server's calls.
import { type EngineConfig, openEngine } from '../open-engine.js';
import { serveProcess } from './rpc.js';

serveProcess(async (config, log) => {
  const opened = await openEngine(config as EngineConfig, log);
  const child = {
    async close() {
      await opened.engine.close();
      await opened.close();
    },
  };
  return new Map<string, object>([
    ['engine', opened.engine],
    ['engineSql', opened.engine.sql],
    ['entitySql', opened.entitySql],
    ['child', child],
  ]);
});
