export interface ClickHouseServer {
  /** HTTP URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Native protocol port (clickhouse-client --port). */
  tcpPort: number;
  /** The temporary directory (config, data, logs). */
  dir: string;
  pid: number | undefined;
  /** Milliseconds from the start until `SELECT 1` answered. */
  startMs: number;
  /** Ends the server and removes its directory (unless started with `keep` or `dir`). */
  stop(): Promise<void>;
}

export function startClickHouse(options?: {
  timeoutMs?: number;
  keep?: boolean;
  /** Runs on this directory's data (created if missing) and keeps it; a fresh temporary directory by default. */
  dir?: string;
  /** Clusters for Distributed tables: name → the native TCP ports of their shards (one server each, on 127.0.0.1). */
  clusters?: Record<string, number[]>;
  /** Settings of the default user's profile, e.g. `{ insert_distributed_sync: 1 }`. */
  settings?: Record<string, string | number>;
}): Promise<ClickHouseServer>;
