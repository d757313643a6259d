// The off-heap insert_id window against a plain Map model: adds, deletes and prunes in a
// seeded random order, with ids of every size (multi-byte UTF-8 included) and several projects;
// then past several blocks of storage and shard doublings, pruned a prefix at a time.
import { expect, test } from 'vitest';
import { InsertIdWindow } from '../../src/ingestion/dedupe.js';

function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WINDOW_MS = 60_000;

test('agrees with a Map model over adds, deletes and prunes', async () => {
  const next = random(7);
  const window = new InsertIdWindow(WINDOW_MS);
  const model = new Map<string, { appId: number; id: string; at: number }>();
  const key = (appId: number, id: string) => `${appId}\u0000${id}`;
  const idOf = (n: number) => (n % 5 === 0 ? `ü-${n}-${'€'.repeat(n % 300)}` : n % 7 === 0 ? `long-${'x'.repeat(1000)}-${n}` : `id-${n}`);
  let now = 1_700_000_000_000;
  for (let step = 0; step < 60_000; step++) {
    if (step % 2000 === 0) await new Promise(setImmediate);
    now += Math.floor(next() * 20);
    const appId = 1 + Math.floor(next() * 3);
    const id = idOf(Math.floor(next() * 20_000));
    const roll = next();
    if (roll < 0.8) {
      const fresh = !model.has(key(appId, id));
      expect(window.add(appId, id, now)).toBe(fresh);
      if (fresh) model.set(key(appId, id), { appId, id, at: now });
    } else if (roll < 0.9) {
      window.delete(appId, id);
      model.delete(key(appId, id));
    } else if (roll < 0.901) {
      window.prune(now);
      for (const [k, entry] of model) if (entry.at < now - WINDOW_MS && Math.floor(entry.at / 1000) < Math.floor((now - WINDOW_MS) / 1000)) model.delete(k);
    }
    expect(window.has(appId, id)).toBe(model.has(key(appId, id)));
  }
  expect(window.size).toBe(model.size);
  for (const { appId, id } of model.values()) expect(window.has(appId, id)).toBe(true);
  expect(window.has(4, 'id-1')).toBe(false);
});

test('an id is per project and exact: a hash collision is not a duplicate', () => {
  const window = new InsertIdWindow(WINDOW_MS);
  expect(window.add(1, 'a', 0)).toBe(true);
  expect(window.add(2, 'a', 0)).toBe(true);
  expect(window.add(1, 'a', 0)).toBe(false);
  // 'Aa' and 'BB' share their UTF-16 code unit sums; any two ids differing only by bytes must differ.
  expect(window.add(1, 'Aa', 0)).toBe(true);
  expect(window.add(1, 'BB', 0)).toBe(true);
  window.prune(WINDOW_MS + 1000);
  expect(window.size).toBe(0);
  expect(window.add(1, 'a', WINDOW_MS + 1000)).toBe(true);
});

test('past several blocks of entries and bytes, pruned a prefix at a time, every id answers right', () => {
  const window = new InsertIdWindow(WINDOW_MS);
  // 200,000 ids (3 blocks of 65,536 entries, ~6 MB of ids in 1 MB blocks), 40 per second.
  const idOf = (n: number) => `block-${n}-${'x'.repeat(n % 50)}`;
  const at = (n: number) => 1_700_000_000_000 + n * 25;
  for (let n = 0; n < 200_000; n++) expect(window.add(1, idOf(n), at(n))).toBe(true);
  expect(window.size).toBe(200_000);
  for (const cut of [70_000, 140_000, 199_000]) {
    window.prune(at(cut) + WINDOW_MS);
    // Pruned by whole seconds: ids of the second the cut falls in stay.
    const kept = 200_000 - Math.floor(cut / 40) * 40;
    expect(window.size).toBe(kept);
    for (let n = 0; n < 200_000; n += 997) expect(window.has(1, idOf(n))).toBe(n >= 200_000 - kept);
    expect(window.add(1, idOf(cut + 100), at(cut))).toBe(false);
  }
  expect(window.add(1, idOf(0), at(200_000))).toBe(true);
});
