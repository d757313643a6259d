// A child process for the RPC tests: a target that fails, streams, dies, logs, and reports what it
// produced and which process it is. It refuses to open while the file its data names exists, and
// logs that it opens.
import { existsSync } from 'node:fs';
import { serveProcess } from '../../src/store/worker/rpc.js';

class Refusal extends Error {
  override name = 'Refusal';
  readonly code = 395;
}

let produced = 0;
let finished = false;
let log: (message: string) => void;

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
  async say(line: string): Promise<void> {
    log(line);
  },
  async pid(): Promise<number> {
    return process.pid;
  },
  async die(): Promise<void> {
    setImmediate(() => {
      throw new Error('the process died on purpose');
    });
    await new Promise(() => undefined);
  },
};

// Something that keeps the process alive, as the engine's database connections do.
setInterval(() => undefined, 60_000);

serveProcess(async (data, childLog) => {
  log = childLog;
  log('opening');
  const refuseWhile = (data as { refuseWhile?: string } | undefined)?.refuseWhile;
  if (refuseWhile !== undefined && existsSync(refuseWhile)) throw new Error('refused to open on purpose');
  return new Map([['target', target]]);
});
