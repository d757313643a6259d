// A worker for the RPC tests: a target that fails, streams, dies, and reports what it produced.
import { parentPort } from 'node:worker_threads';
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
  async die(): Promise<void> {
    setImmediate(() => {
      throw new Error('the worker died on purpose');
    });
    await new Promise(() => undefined);
  },
};

void serve(parentPort!, async () => new Map([['target', target]]));
