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
  /** Its ports, to start it again on them (`ports`). */
  ports: ClickHousePorts;
  /** Ends the server and removes its directory (unless started with `keep` or `dir`). */
  stop(): Promise<void>;
  /** Ends the process at once (SIGKILL), as a crash would; its directory is kept for a restart. */
  kill(): Promise<void>;
}

export interface ClickHousePorts {
  http: number;
  tcp: number;
  /** Where replicas fetch parts from this one. */
  interserver: number;
}

export function startClickHouse(options?: {
  timeoutMs?: number;
  keep?: boolean;
  /** Runs on this directory's data (created if missing) and keeps it unless `keep` is false; a fresh temporary directory by default. */
  dir?: string;
  /** Clusters for Distributed tables: name → their shards' native TCP ports on 127.0.0.1 (a port: one server; ports: replicas of the shard). */
  clusters?: Record<string, (number | number[])[]>;
  /** Settings of the default user's profile, e.g. `{ insert_distributed_sync: 1 }`. */
  settings?: Record<string, string | number>;
  /** A ZooKeeper's client port on 127.0.0.1: the server can hold replicated tables. */
  zookeeper?: number;
  /** Substitutions in replicated tables' paths, e.g. `{ shard: 1, replica: 'r1' }`. */
  macros?: Record<string, string | number>;
  /** The ports of an earlier start (with its `dir`): a restart where its peers know it. */
  ports?: ClickHousePorts;
}): Promise<ClickHouseServer>;
