import type { ClickHouseServer } from './start.mjs';

export const CLUSTER: string;

export interface ClickHouseCluster {
  /** The name of the cluster in every server's remote_servers. */
  cluster: string;
  /** Each shard's replicas' HTTP URLs, the first shard first. */
  shardUrls(): string[][];
  server(shard: number, replica?: number): ClickHouseServer;
  /** Ends a server at once (SIGKILL), as a crash would. */
  kill(shard: number, replica?: number): Promise<void>;
  /** Starts a killed server again on its data and ports. */
  restart(shard: number, replica?: number): Promise<void>;
  stop(): Promise<void>;
}

export function startCluster(options?: { shards?: number; replicas?: number }): Promise<ClickHouseCluster>;
