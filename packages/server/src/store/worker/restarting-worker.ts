// A worker thread that is started again when it dies (an uncaught error, or its heap out of
// memory: Node ends the thread with ERR_WORKER_OUT_OF_MEMORY and the process lives on).
// Calls pending at the death fail; calls made after it wait for the new thread and go there.
// Starts back off, so that a thread that dies at or soon after its start does not spin.
import type { SqlSession } from '../types.js';
import { type Caller, type RpcClient, type ServingWorker, startWorker } from './rpc.js';

/** The wait before starting a dead thread again: `firstMs`, doubled at each death up to `maxMs`. */
export interface Backoff {
  firstMs: number;
  maxMs: number;
}

export const RESTART_BACKOFF: Backoff = { firstMs: 1000, maxMs: 30_000 };

export class RestartingWorker implements Caller {
  /** The live thread, or the next start of one (which calls wait for). */
  private current: Promise<ServingWorker>;
  private delayMs: number;
  private closed = false;
  private cancelWait: (() => void) | undefined;

  private constructor(
    private readonly entry: URL,
    private readonly workerData: unknown,
    private readonly log: (message: string) => void,
    private readonly backoff: Backoff,
    first: ServingWorker,
  ) {
    this.delayMs = backoff.firstMs;
    this.current = Promise.resolve(first);
    this.watch(first);
  }

  /** Starts the worker of module `entry`; a failure to start this first time is thrown. */
  static async start(entry: URL, workerData: unknown, log: (message: string) => void, backoff = RESTART_BACKOFF): Promise<RestartingWorker> {
    return new RestartingWorker(entry, workerData, log, backoff, await startWorker(entry, workerData, log));
  }

  private watch(worker: ServingWorker): void {
    const startedAt = Date.now();
    void worker.died.then(() => {
      if (this.closed) return;
      // A thread that served longer than the longest wait did not die of its start: wait little again.
      if (Date.now() - startedAt >= this.backoff.maxMs) this.delayMs = this.backoff.firstMs;
      this.restart(worker);
    });
  }

  /** Starts a thread after the backoff, once `dead` has exited (a DuckDB file is free again only then). */
  private restart(dead?: ServingWorker): void {
    const delay = this.delayMs;
    this.delayMs = Math.min(delay * 2, this.backoff.maxMs);
    this.log(`starting a new thread in ${delay} ms`);
    const started = Promise.all([this.wait(delay), dead?.terminate()]).then(() => startWorker(this.entry, this.workerData, this.log));
    this.current = started.then(
      async (worker) => {
        if (this.closed) {
          await worker.terminate();
          throw new Error('The worker thread was closed');
        }
        this.log('the new thread serves');
        this.watch(worker);
        return worker;
      },
      (error: Error) => {
        if (this.closed) throw new Error('The worker thread was closed');
        this.log(`the new thread did not start: ${error.message}`);
        this.restart();
        throw new Error(`The worker thread died and a new one did not start: ${error.message}`);
      },
    );
    // Only calls waiting for this start see its failure.
    this.current.catch(() => undefined);
  }

  /** Resolves after `ms`, or rejects at once when closed meanwhile. */
  private wait(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      this.cancelWait = () => {
        clearTimeout(timer);
        reject(new Error('The worker thread was closed'));
      };
    });
  }

  private async client(): Promise<RpcClient> {
    return (await this.current).client;
  }

  async call(target: string, method: string, args: unknown[]): Promise<unknown> {
    return (await this.client()).call(target, method, args);
  }

  /** The whole stream comes from the thread that is live at its first chunk. */
  async *stream(target: string, method: string, args: unknown[]): AsyncIterable<unknown> {
    yield* (await this.client()).stream(target, method, args);
  }

  async transaction<T>(target: string, work: (session: Omit<SqlSession, 'transaction'>) => Promise<T>): Promise<T> {
    return (await this.client()).transaction(target, work);
  }

  /** Ends the live thread as a death would (for tests). */
  async kill(): Promise<void> {
    await (await this.current).kill();
  }

  /** Stops restarting; `farewell` runs on the live thread, if there is one, before it ends. */
  async close(farewell: (client: RpcClient) => Promise<unknown>): Promise<void> {
    this.closed = true;
    this.cancelWait?.();
    const worker = await this.current.catch(() => undefined);
    if (!worker) return;
    try {
      await farewell(worker.client);
    } finally {
      await worker.terminate();
    }
  }
}
