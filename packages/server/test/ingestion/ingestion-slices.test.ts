// Upload batches are worked on a slice at a time, with turns of the event loop in between:
// concurrent batches must still be judged, deduplicated and journalled in the order they
// arrived, each event stored once, as if every batch had been handled in one piece.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import type { HandlerRequest } from '../../src/http/operations.js';
import { IngestionService } from '../../src/ingestion/handlers.js';
import { DEFAULT_EVENT_RULES, toStoredEvent } from '../../src/model/events.js';
import { Throttle } from '../../src/ingestion/throttle.js';
import { DEFAULT_THROTTLE } from '../../src/server.js';
import { JournalledStore } from '../../src/store/journalled-store.js';
import { yieldToEventLoop } from '../../src/shared/time-slice.js';
import type { Engine, Store, StoredEvent } from '../../src/store/types.js';

const T0 = Date.UTC(2026, 10, 1);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** An upload of events labelled by their batch (`event_type`), from one device, with these insert_ids. */
function upload(batch: string, ids: number[]): HandlerRequest<'createBatchEvents'> {
  const events = ids.map((n) => ({ event_type: batch, device_id: 'device-1', insert_id: `id-${n}` }));
  return { body: { api_key: 'key', events }, caller: { project: { app_id: 1 } }, receivedAt: T0, payloadBytes: 0, remoteAddress: '127.0.0.1' } as never;
}

test('concurrent batches with overlapping insert_ids: both acknowledged, each event stored once, in arrival order', async () => {
  const journalled: StoredEvent[] = [];
  const store = { append: async (records: StoredEvent[]) => void journalled.push(...records) } as unknown as Store;
  // Every event of a batch is a slice of its own: the batches' work interleaves as much as it can.
  const service = new IngestionService(store, new Throttle(DEFAULT_THROTTLE), DEFAULT_EVENT_RULES, undefined, () => () => yieldToEventLoop());
  const answers = await Promise.all([service.upload(upload('A', range(0, 10))), service.upload(upload('B', range(5, 15))), service.upload(upload('A again', range(0, 10)))]);
  for (const answer of answers) expect(answer).toMatchObject({ status: 200, body: { events_ingested: 10 } });
  expect(journalled.map((event) => `${event.event_type} ${event.insert_id}`)).toEqual([...range(0, 10).map((n) => `A id-${n}`), ...range(10, 15).map((n) => `B id-${n}`)]);
});

test('journal lines keep the order of the appends while a large one is still encoding', async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-slices-'));
  const engine = { isLoaded: async () => true, close: async () => undefined } as unknown as Engine;
  const store = await JournalledStore.open(engine, dir, { loadIntervalMs: 3_600_000, segmentBytes: 1 << 30, log: () => undefined });
  const events = (type: string, count: number) => range(0, count).map((n) => toStoredEvent({ event_type: type, user_id: `user-${n}` }, { appId: 1, receivedAt: T0, remoteAddress: '' }, DEFAULT_EVENT_RULES));
  // 20,000 lines take tens of ms to encode: several slices.
  await Promise.all([store.append(events('Large', 20_000)), store.append(events('Small', 1))]);
  const segment = readdirSync(join(dir, 'journal')).find((name) => name.endsWith('.ndjson'))!;
  const types = readFileSync(join(dir, 'journal', segment), 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => (JSON.parse(line) as StoredEvent).event_type);
  expect(types).toEqual([...Array<string>(20_000).fill('Large'), 'Small']);
  await store.close();
});
