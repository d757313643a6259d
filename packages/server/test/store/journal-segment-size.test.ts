// A load holds its whole segment in memory: while one load is slow (the engine busy), the
// ingestion that arrives must go to further segments of about `segmentBytes`, not into one
// segment that grows until its own load runs out of memory.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { DuckDbEngine } from '../../src/store/duckdb/engine.js';
import { JournalledStore } from '../../src/store/journalled-store.js';
import type { Engine, StoredEvent } from '../../src/store/types.js';
import { stored } from './clickhouse/engines.js';

const APP = 5;
const T0 = Date.UTC(2026, 10, 1);
const SEGMENT_BYTES = 16 * 1024;
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The engine, recording each loaded segment's size; its loads wait while `held` is set. */
function slow(engine: DuckDbEngine, sizes: number[], held: { until: Promise<void> }): Engine {
  return new Proxy(engine, {
    get(target, property) {
      if (property === 'loadSegment') {
        return async (path: string, name: string) => {
          sizes.push(statSync(path).size);
          await held.until;
          return target.loadSegment(path, name);
        };
      }
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

test('segments stay near segmentBytes while a load is slow, and every record loads', async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-segment-size-'));
  const engine = await DuckDbEngine.open(dir);
  const sizes: number[] = [];
  let release!: () => void;
  const held = { until: new Promise<void>((resolve) => (release = resolve)) };
  const store = await JournalledStore.open(slow(engine, sizes, held), dir, { loadIntervalMs: 3_600_000, segmentBytes: SEGMENT_BYTES, log: () => undefined });
  const batch = (from: number) => Array.from({ length: 20 }, (_, i): StoredEvent => stored({ event_type: 'Open', user_id: `u${from + i}`, time: T0 + i }, from + i, APP, T0));
  await store.append(batch(0));
  const firstLoad = store.flush();
  await expect.poll(() => sizes.length).toBe(1);
  const batchBytes = sizes[0]!;
  for (let from = 20; from < 2020; from += 20) await store.append(batch(from));
  release();
  await firstLoad;
  await store.flush();
  expect((await store.events(APP)).length).toBe(2020);
  // Each segment was sealed after the append that took it past SEGMENT_BYTES (a few more may
  // land while the next segment opens: 4-5 on a busy 2-core machine), however long the slow
  // load took; unsealed, one segment took all 100 batches.
  expect(Math.max(...sizes)).toBeLessThan(SEGMENT_BYTES + 8 * batchBytes);
  expect(sizes.length).toBeGreaterThan((100 * batchBytes) / (SEGMENT_BYTES + batchBytes));
  await store.close();
});
