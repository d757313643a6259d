// A thread of the engine's that tallies the second half of a large funnel's users while the
// engine's own thread tallies the first (funnel.ts): funnels over the timelines are
// plain JS, one core each, and the machines this runs on have two. Small funnels stay in one
// thread (a message each way costs more than they do). A share the thread fails is tallied by
// the engine's thread instead (the same answer, later), and the failure is logged.
import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ColumnsShare, FunnelHelper, ShareTally } from './funnel.js';

/** Funnels with fewer users entering (in the build's columns) stay in one thread. */
export const SHARED_FUNNEL_USERS = 20_000;

/** The thread's module: compiled next to this one, or the TypeScript source when run from it (tests). */
const THREAD_ENTRY = new URL(`./funnel-thread${extname(new URL(import.meta.url).pathname)}`, import.meta.url);

interface Pending {
  resolve: (tally: ShareTally) => void;
  reject: (error: Error) => void;
}

export class FunnelThread implements FunnelHelper {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  constructor(
    /** Operator-facing messages (the thread's failures). */
    private readonly log: (message: string) => void,
    private readonly leastUsers = SHARED_FUNNEL_USERS,
  ) {}

  tally(share: ColumnsShare, users: number): Promise<ShareTally> | undefined {
    if (users < this.leastUsers) return undefined;
    const worker = this.started();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, share });
    });
  }

  /** The thread, started at the first funnel that needs it (again after it failed). */
  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(THREAD_ENTRY);
    // The engine's process ends when its own work does.
    worker.unref();
    worker.on('message', ({ id, tally, error }: { id: number; tally?: ShareTally; error?: string }) => {
      const pending = this.pending.get(id);
      this.pending.delete(id);
      if (error === undefined) pending?.resolve(tally!);
      else this.failed(new Error(`funnel thread: ${error}`), pending);
    });
    worker.on('error', (error) => {
      this.log(`the funnel thread ended on an error; it starts again with the next large funnel: ${error.stack ?? error.message}`);
      this.failAll(error);
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = undefined;
      this.failAll(new Error(`funnel thread exited (code ${code})`));
    });
    return (this.worker = worker);
  }

  private failed(error: Error, pending: Pending | undefined): void {
    this.log(`the funnel thread failed a share of a funnel's users, tallied by the engine's thread instead: ${error.message}`);
    pending?.reject(error);
  }

  private failAll(error: Error): void {
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}
