// insert_id deduplication over a sliding window (7 days by default), kept off the JS heap
// (off-heap-keys.ts): entries are added in the order ids arrive, so the ids received before
// the window are the oldest entries, dropped a prefix at a time.
import { OffHeapKeys } from '../shared/off-heap-keys.js';

/** The value column of an entry: the second it was received. */
const RECEIVED = 0;

export class InsertIdWindow {
  private readonly keys = new OffHeapKeys(1);

  constructor(private readonly windowMs: number) {}

  get size(): number {
    return this.keys.size;
  }

  has(appId: number, insertId: string): boolean {
    return this.keys.find(appId, insertId) >= 0;
  }

  /** Records an insert_id received at `receivedAt` (ms); false when it is already there. */
  add(appId: number, insertId: string, receivedAt: number): boolean {
    const n = this.keys.addIfAbsent(appId, insertId);
    if (n < 0) return false;
    this.keys.setValue(n, RECEIVED, Math.floor(receivedAt / 1000));
    return true;
  }

  /** Forgets an insert_id (a reservation whose write failed). */
  delete(appId: number, insertId: string): void {
    const n = this.keys.find(appId, insertId);
    if (n >= 0) this.keys.remove(n);
  }

  /** Drops the ids received before the window. */
  prune(now: number): void {
    const oldest = Math.floor((now - this.windowMs) / 1000);
    let n = this.keys.first;
    for (; n < this.keys.end && this.keys.value(n, RECEIVED) < oldest; n++) if (this.keys.isLive(n)) this.keys.remove(n);
    this.keys.dropBefore(n);
  }
}
