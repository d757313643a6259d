// Long work on the event loop's thread (segment loading, parsing and storing upload batches)
// gives way to timers and I/O a slice at a time.

/** Work waiting for its slice, first come first served. */
const waiting: (() => void)[] = [];

function runNextSlice(): void {
  waiting.shift()!();
  if (waiting.length > 0) setImmediate(runNextSlice);
}

/**
 * Resolves on a later turn of the event loop, after its timers and I/O: one waiting piece of
 * work resumes per turn. Immediates queued while the loop polls all run in that same turn,
 * before its timers come round again: slices of several requests (8 uploads in flight)
 * resumed each by its own `setImmediate` ran back to back and held the loop as one.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (waiting.length === 1) setImmediate(runNextSlice);
  });
}

/** Work between two turns of the event loop in long loops (request handling waits meanwhile). */
const SLICE_MS = 4;

/** Called after each row: a promise to await when the slice is over. */
export type Slicer = (row: number) => Promise<void> | undefined;

/**
 * Yields to the event loop once a slice of work has run: counted in time, not rows, as a
 * row costs several times more while a query holds the other core, and tens of times more
 * before V8 has compiled the code.
 */
export function timeSlicer(): Slicer {
  let sliceStart = performance.now();
  return (row) => {
    if (row % 8 !== 7 || performance.now() - sliceStart < SLICE_MS) return undefined;
    return yieldToEventLoop().then(() => {
      sliceStart = performance.now();
    });
  };
}

/** Runs `work` on each item in order, yielding to the event loop between slices of work. */
export async function eachInSlices<T>(items: readonly T[], work: (item: T, index: number) => void, slice: Slicer = timeSlicer()): Promise<void> {
  for (let i = 0; i < items.length; i++) {
    work(items[i]!, i);
    const pause = slice(i);
    if (pause) await pause;
  }
}
