// Requests running at a time per project, for the concurrency limits.

/** Counts `size` more running for the project; the returned function gives them back, once. */
export function takeSlots(running: Map<number, number>, appId: number, size = 1): () => void {
  running.set(appId, (running.get(appId) ?? 0) + size);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    running.set(appId, (running.get(appId) ?? size) - size);
  };
}
