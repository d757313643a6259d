// A worker for the RPC tests: a target that fails, streams, dies, and reports what it produced
// and which thread it is. It refuses to open while its workerData's `refuseOpen` flag is set.
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { serve } from '../../src/store/worker/rpc.js';

class Refusal extends Error {
  override name = 'Refusal';
  readonly code = 395;
}

let produced = 0;
let finished = false;

const target = {
  async refuse(): Promise<void> {
    throw new Refusal('Code: 395. refused on purpose');
  },
  async *chunks(count: number): AsyncIterable<number[]> {
    try {
      for (let i = 0; i < count; i++) {
        produced++;
        yield [i, i];
      }
    } finally {
      finished = true;
    }
  },
  async production(): Promise<{ produced: number; finished: boolean }> {
    return { produced, finished };
  },
  async thread(): Promise<number> {
    return threadId;
  },
  async die(): Promise<void> {
    setImmediate(() => {
      throw new Error('the worker died on purpose');
    });
    await new Promise(() => undefined);
  },
};

const refuseOpen = (workerData as { refuseOpen?: Int32Array } | undefined)?.refuseOpen;

void serve(parentPort!, async () => {
  if (refuseOpen && Atomics.load(refuseOpen, 0) === 1) throw new Error('refused to open on purpose');
  return new Map([['target', target]]);
});
