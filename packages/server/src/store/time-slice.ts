// Long loops on the event loop's thread (segment loading) give way to request handling.
/** One turn of the event loop. */
export const yieldToEventLoop = () => new Promise((resolve) => setImmediate(resolve));

/** Work between two turns of the event loop in long loops (request handling waits meanwhile). */
const SLICE_MS = 4;

/**
 * Yields to the event loop once a slice of work has run: counted in time, not rows, as a
 * row costs several times more while a query holds the other core.
 */
export function timeSlicer(): (row: number) => Promise<void> | undefined {
  let sliceStart = performance.now();
  return (row) => {
    if (row % 64 !== 63 || performance.now() - sliceStart < SLICE_MS) return undefined;
    return yieldToEventLoop().then(() => {
      sliceStart = performance.now();
    });
  };
}
