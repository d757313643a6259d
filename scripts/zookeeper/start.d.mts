export interface ZooKeeperServer {
  /** Client port on 127.0.0.1. */
  port: number;
  /** The temporary directory (config, data). */
  dir: string;
  pid: number | undefined;
  /** Milliseconds from the start until it answered `conf` with its data directory. */
  startMs: number;
  /** Ends the server and removes its directory. */
  stop(): Promise<void>;
}

export function startZooKeeper(options?: { timeoutMs?: number }): Promise<ZooKeeperServer>;
