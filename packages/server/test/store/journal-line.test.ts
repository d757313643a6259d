// Journal lines leave out null fields; loading them gives back the stored event exactly,
// nulls included, and nulls inside property objects are kept.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { DEFAULT_EVENT_RULES, toStoredEvent } from '../../src/model/events.js';
import { DuckDbEngine } from '../../src/store/duckdb/engine.js';

let dataDir: string;
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

test('a line has no null fields, keeps nested nulls, and loads back into the same event', async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-line-'));
  const engine = await DuckDbEngine.open(dataDir);
  const event = toStoredEvent(
    { event_type: 'Checkout', user_id: 'user-00001', event_properties: { coupon: null, items: [1, null] }, price: 2.5, quantity: 2 },
    { appId: 3, receivedAt: 1_700_000_000_000, remoteAddress: '' },
    DEFAULT_EVENT_RULES,
  );
  const line = engine.journalLine(event);
  const parsed = JSON.parse(line) as Record<string, unknown>;
  expect(Object.values(parsed)).not.toContain(null);
  expect(parsed.event_properties).toEqual({ coupon: null, items: [1, null] });
  expect(Object.keys(parsed).length).toBeLessThan(Object.keys(event).length);
  const segment = join(dataDir, 'segment.ndjson');
  writeFileSync(segment, `${line}\n`);
  await engine.loadSegment(segment, 'segment.ndjson');
  expect(await engine.events(3)).toEqual([{ ...event, svc_id: 1 }]);
  await engine.close();
});
