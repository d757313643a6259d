// An engine that does not answer (ClickHouse down, the engine's process dead) must not make the
// journal quarantine the records it cannot load: they stay in the journal and load once the
// engine answers again. So do records whose load fails as storage unavailable while the engine
// answers other questions (a ClickHouse shard down, the first one up). A record the engine
// refuses while it answers is still quarantined.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { DuckDbEngine } from '../../src/store/duckdb/engine.js';
import { JournalledStore } from '../../src/store/journalled-store.js';
import type { Engine, StoredEvent } from '../../src/store/types.js';
import { stored } from './clickhouse/engines.js';

const APP = 5;
const T0 = Date.UTC(2026, 10, 1);
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The engine, whose loads and questions fail while `down.now` holds (loads alone, with `down.loadsOnly`). */
function unreliable(engine: DuckDbEngine, down: { now: boolean; loadsOnly?: boolean }): Engine {
  return new Proxy(engine, {
    get(target, property) {
      if (down.now && down.loadsOnly && property === 'loadSegment') {
        return async () => {
          throw new Error('Code: 279, e.displayText() = DB::NetException: All connection tries failed. Log: \n\nCode: 210, e.displayText() = DB::NetException: Connection refused (127.0.0.1:9001)');
        };
      }
      if (down.now && !down.loadsOnly && (property === 'loadSegment' || property === 'isLoaded')) {
        return async () => {
          throw new Error('connect ECONNREFUSED 127.0.0.1:8123');
        };
      }
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

test('records are kept, not quarantined, while the engine does not answer, and load once it does', async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-engine-down-'));
  const engine = await DuckDbEngine.open(dir);
  const down = { now: false };
  const logged: string[] = [];
  const store = await JournalledStore.open(unreliable(engine, down), dir, { loadIntervalMs: 60_000, segmentBytes: 1 << 20, log: (message) => logged.push(message) });
  const events = (from: number) => Array.from({ length: 4 }, (_, i): StoredEvent => stored({ event_type: 'Open', user_id: `u${from + i}`, time: T0 + i }, from + i, APP, T0));
  down.now = true;
  await store.append(events(0));
  await store.flush();
  await store.append(events(4));
  await store.flush();
  expect(existsSync(join(dir, 'journal', 'quarantine')) && readdirSync(join(dir, 'journal', 'quarantine')).length > 0).toBe(false);
  expect(logged.some((message) => message.startsWith('quarantined'))).toBe(false);
  expect(logged.filter((message) => message.includes('kept for the next try'))).toHaveLength(2);
  down.now = false;
  await store.flush();
  expect((await store.events(APP)).map((event) => event.user_id).sort()).toEqual(['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7']);
  await store.append([{ ...events(8)[0]!, quantity: 3e9 }]);
  await store.flush();
  expect(logged.filter((message) => message.startsWith('quarantined'))).toHaveLength(1);
  await store.close();
});

test('records whose load fails as storage unavailable while the engine answers (a shard down) are kept, not quarantined', async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-shard-down-'));
  const engine = await DuckDbEngine.open(dir);
  const down = { now: true, loadsOnly: true };
  const logged: string[] = [];
  const store = await JournalledStore.open(unreliable(engine, down), dir, { loadIntervalMs: 60_000, segmentBytes: 1 << 20, log: (message) => logged.push(message) });
  await store.append(Array.from({ length: 4 }, (_, i): StoredEvent => stored({ event_type: 'Open', user_id: `u${i}`, time: T0 + i }, i, APP, T0)));
  await store.flush();
  expect(logged.some((message) => message.startsWith('quarantined'))).toBe(false);
  down.now = false;
  await store.flush();
  expect((await store.events(APP)).map((event) => event.user_id).sort()).toEqual(['u0', 'u1', 'u2', 'u3']);
  await store.close();
});
