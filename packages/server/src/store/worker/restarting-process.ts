// A child process that is started again when it dies (killed, out of memory, aborted by DuckDB,
// an uncaught error). Calls pending at the death fail; calls made after it wait for the new
// process and go there. Starts back off, so that a process that dies at or soon after its start
// does not spin.
import type { SqlSession } from '../types.js';
import { type Caller, type Launch, type RpcClient, type ServingProcess, startProcess } from './rpc.js';

/** The wait before starting a dead process again: `firstMs`, doubled at each death up to `maxMs`. */
export interface Backoff {
  firstMs: number;
  maxMs: number;
}

export const RESTART_BACKOFF: Backoff = { firstMs: 1000, maxMs: 30_000 };

export class RestartingProcess implements Caller {
  /** The live process, or the next start of one (which calls wait for). */
  private current: Promise<ServingProcess>;
  private delayMs: number;
  private closed = false;
  private cancelWait: (() => void) | undefined;

  private constructor(
    private readonly launch: Launch,
    private readonly log: (message: string) => void,
    private readonly backoff: Backoff,
    first: ServingProcess,
  ) {
    this.delayMs = backoff.firstMs;
    this.current = Promise.resolve(first);
    this.watch(first);
  }

  /** Starts the process of `launch`; a failure to start this first time is thrown. */
  static async start(launch: Launch, log: (message: string) => void, backoff = RESTART_BACKOFF): Promise<RestartingProcess> {
    return new RestartingProcess(launch, log, backoff, await startProcess(launch, log));
  }

  private watch(child: ServingProcess): void {
    const startedAt = Date.now();
    void child.died.then(() => {
      if (this.closed) return;
      // A process that served longer than the longest wait did not die of its start: wait little again.
      if (Date.now() - startedAt >= this.backoff.maxMs) this.delayMs = this.backoff.firstMs;
      this.restart(child);
    });
  }

  /** Starts a process after the backoff, once `dead` has exited (a DuckDB file is free again only then). */
  private restart(dead?: ServingProcess): void {
    const delay = this.delayMs;
    this.delayMs = Math.min(delay * 2, this.backoff.maxMs);
    this.log(`starting a new process in ${delay} ms`);
    const started = Promise.all([this.wait(delay), dead?.terminate()]).then(() => startProcess(this.launch, this.log));
    this.current = started.then(
      async (child) => {
        if (this.closed) {
          await child.terminate();
          throw new Error('The process was closed');
        }
        this.log('the new process serves');
        this.watch(child);
        return child;
      },
      (error: Error) => {
        if (this.closed) throw new Error('The process was closed');
        this.log(`the new process did not start: ${error.message}`);
        this.restart();
        throw new Error(`The process died and a new one did not start: ${error.message}`);
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
        reject(new Error('The process was closed'));
      };
    });
  }

  private async client(): Promise<RpcClient> {
    return (await this.current).client;
  }

  async call(target: string, method: string, args: unknown[]): Promise<unknown> {
    return (await this.client()).call(target, method, args);
  }

  /** The whole stream comes from the process that is live at its first chunk. */
  async *stream(target: string, method: string, args: unknown[]): AsyncIterable<unknown> {
    yield* (await this.client()).stream(target, method, args);
  }

  async transaction<T>(target: string, work: (session: Omit<SqlSession, 'transaction'>) => Promise<T>): Promise<T> {
    return (await this.client()).transaction(target, work);
  }

  /** Ends the live process as a death would (for tests). */
  async kill(): Promise<void> {
    await (await this.current).kill();
  }

  /** Stops restarting; `farewell` runs on the live process, if there is one, before it ends. */
  async close(farewell: (client: RpcClient) => Promise<unknown>): Promise<void> {
    this.closed = true;
    this.cancelWait?.();
    const child = await this.current.catch(() => undefined);
    if (!child) return;
    try {
      await farewell(child.client);
    } finally {
      await child.terminate();
    }
  }
}
