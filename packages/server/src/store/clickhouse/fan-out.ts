// One stream of chunks split into one stream per shard: each event goes to the stream of its
// shard, read by that shard's INSERT as it sends. Each stream holds a few chunks at most: the
// source is read as fast as the slowest INSERT takes them, never whole into memory.
import { once } from 'node:events';
import { PassThrough } from 'node:stream';

/** Chunks waiting per shard before the source is read further. */
const WAITING_CHUNKS = 2;

/**
 * Reads `chunks`, gives each shard's `send` its items in chunks of their own (`shardOf(item)`
 * is its index in `sends`), and resolves once every send has; the first failure stops them all
 * and is the answer.
 */
export async function fanOut<T>(chunks: Iterable<readonly T[]> | AsyncIterable<readonly T[]>, shardOf: (item: T) => number, sends: readonly ((chunks: AsyncIterable<T[]>) => Promise<void>)[]): Promise<void> {
  const streams = sends.map(() => new PassThrough({ objectMode: true, highWaterMark: WAITING_CHUNKS }));
  let failure: { reason: unknown } | undefined;
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  // The first failure is the answer; ending every stream fails the other sends too.
  const fail = (reason: unknown) => {
    if (failure) return;
    failure = { reason };
    for (const stream of streams) stream.destroy();
    stop();
  };
  const sent = sends.map((send, i) => send(streams[i]!).catch(fail));
  const split = (async () => {
    for await (const chunk of chunks) {
      const parts = streams.map((): T[] => []);
      for (const item of chunk) parts[shardOf(item)]!.push(item);
      for (const [i, part] of parts.entries()) {
        if (failure) return;
        if (part.length > 0 && !streams[i]!.write(part)) await Promise.race([once(streams[i]!, 'drain'), stopped]);
      }
    }
    for (const stream of streams) stream.end();
  })().catch(fail);
  await Promise.all([split, ...sent]);
  if (failure) throw failure.reason;
}
