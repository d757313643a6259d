export interface PostgresServer {
  /** Connection URL, e.g. `postgres://svc@127.0.0.1:41234/postgres` (trust authentication on loopback). */
  url: string;
  port: number;
  /** The temporary directory (cluster data, Unix socket). */
  dir: string;
  pid: number | undefined;
  /** Milliseconds from the start (initdb included) until the server accepted connections. */
  startMs: number;
  /** Ends the server and removes its directory (unless started with `keep`). */
  stop(): Promise<void>;
  /** Stops the server (fast shutdown: open sessions end), keeping its data, as a restart's first half. */
  down(): Promise<void>;
  /** Starts it again on the same data and port. */
  up(): Promise<void>;
}

export function startPostgres(options?: { timeoutMs?: number; keep?: boolean }): Promise<PostgresServer>;
