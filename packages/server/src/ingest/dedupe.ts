// insert_id deduplication over a sliding window (7 days by default), in process: per
// project a Map from insert_id to the time it was first received (keyed by the insert_id
// itself: no key string is built per event). Map iteration follows insertion, which
// follows time, so pruning stops at the first entry still inside the window.

export class InsertIdWindow {
  private readonly projects = new Map<number, Map<string, number>>();

  constructor(private readonly windowMs: number) {}

  /** The insert_ids of one project (created on first use). */
  seenIn(appId: number): Map<string, number> {
    let seen = this.projects.get(appId);
    if (!seen) this.projects.set(appId, (seen = new Map()));
    return seen;
  }

  has(appId: number, insertId: string): boolean {
    return this.projects.get(appId)?.has(insertId) ?? false;
  }

  /** Records an insert_id (no-op when present: the first sighting keeps its time). */
  add(appId: number, insertId: string, receivedAt: number): void {
    const seen = this.seenIn(appId);
    if (!seen.has(insertId)) seen.set(insertId, receivedAt);
  }

  delete(appId: number, insertId: string): void {
    this.projects.get(appId)?.delete(insertId);
  }

  prune(now: number): void {
    for (const seen of this.projects.values()) {
      for (const [insertId, receivedAt] of seen) {
        if (receivedAt >= now - this.windowMs) break;
        seen.delete(insertId);
      }
    }
  }

  get size(): number {
    let size = 0;
    for (const seen of this.projects.values()) size += seen.size;
    return size;
  }
}
