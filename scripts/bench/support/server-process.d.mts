import type { ChildProcess } from 'node:child_process';

export interface ServerProcess {
  engine: 'duckdb' | 'clickhouse';
  dataDir: string;
  child: ChildProcess;
  /** The private ClickHouse server's pid (engine clickhouse). */
  clickhousePid: number | undefined;
  /** The private ClickHouse server's HTTP URL (engine clickhouse). */
  clickhouseUrl: string | undefined;
  /** Base URL of every host role. */
  url: string;
  apiKey: string;
  secretKey: string;
  deploymentKey: string;
  /** Ends the server (and the engine's servers) and removes its data directory. */
  stop(): Promise<void>;
}

export function startServerProcess(options?: {
  engine?: 'duckdb' | 'clickhouse';
  engineNice?: 'idle' | number;
  nodeArgs?: string[];
  /** More options of `svc-server start`. */
  serverArgs?: string[];
  env?: NodeJS.ProcessEnv;
  onStderr?: (chunk: Buffer) => void;
}): Promise<ServerProcess>;
