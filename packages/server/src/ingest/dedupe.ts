// insert_id deduplication over a sliding window (7 days by default), in process: a Map from
// project + insert_id to the time it was first received. Map iteration follows insertion,
// which follows time, so pruning stops at the first entry still inside the window.

export class InsertIdWindow {
  private readonly seen = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  private static key(appId: number, insertId: string): string {
    return `${appId}\u0000${insertId}`;
  }

  has(appId: number, insertId: string): boolean {
    return this.seen.has(InsertIdWindow.key(appId, insertId));
  }

  /** Records an insert_id (no-op when present: the first sighting keeps its time). */
  add(appId: number, insertId: string, receivedAt: number): void {
    const key = InsertIdWindow.key(appId, insertId);
    if (!this.seen.has(key)) this.seen.set(key, receivedAt);
  }

  delete(appId: number, insertId: string): void {
    this.seen.delete(InsertIdWindow.key(appId, insertId));
  }

  prune(now: number): void {
    for (const [key, receivedAt] of this.seen) {
      if (receivedAt >= now - this.windowMs) break;
      this.seen.delete(key);
    }
  }

  get size(): number {
    return this.seen.size;
  }
}
