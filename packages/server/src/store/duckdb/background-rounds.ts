// Background work of the DuckDB engine (timeline builds, property materializations), run a
// round at a time beside the loads and retried after failures.

/** After a failed run, the work is tried again this much later, doubled for each failure in a row up to the most. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MOST_MS = 3_600_000;

/**
 * Work done in the background a round at a time while some is due: one run at a time. A failed
 * round ends the run; `failed` is told (for the operator's log) and the work is tried again
 * after a wait that grows with each failure in a row (a start asked for meanwhile is that retry).
 */
export class BackgroundRounds {
  private running?: Promise<void>;
  private retryMs = 0;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly due: () => boolean,
    private readonly round: () => Promise<void>,
    private readonly failed: (error: Error, retryInMs: number) => void,
  ) {}

  /** Starts a run unless one is on or a retry is waiting. */
  start(): void {
    if (this.running || this.retry) return;
    const rounds = async () => {
      while (this.due()) await this.round();
    };
    this.running = rounds().then(
      () => {
        this.running = undefined;
        this.retryMs = 0;
        // Work that came as the last round ended.
        if (this.due()) this.start();
      },
      (error: unknown) => {
        this.running = undefined;
        this.retryMs = Math.min(RETRY_MOST_MS, 2 * this.retryMs || RETRY_FIRST_MS);
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.start();
        }, this.retryMs).unref();
        this.failed(error as Error, this.retryMs);
        throw error;
      },
    );
    // The failure is logged; `ended` gives it to whoever waits for the run.
    this.running.catch(() => undefined);
  }

  /** Resolves once no run is on (a retry waiting is not a run); rejects when the run it waited for failed. */
  async ended(): Promise<void> {
    while (this.running) await this.running;
  }
}
