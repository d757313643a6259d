// The Export API's 4 GB limit is judged on an estimate made before the answer starts
// (exported-events.ts): on both engines it must not fall short of the lines written, even when
// the lines carry much more than the events stored (a user's large profile at every event).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { estimatedExportBytes } from '../../../src/store/exported-events.js';
import type { StoredEvent } from '../../../src/store/types.js';
import { EnginePair } from './engines.js';

const APP = 3;
const T = Date.UTC(2026, 10, 20, 9, 0, 0);
const HOUR = 3_600_000;
const BIG = 'x'.repeat(20_000);

let pair: EnginePair;

const event = (i: number, fields: Partial<StoredEvent>): StoredEvent =>
  ({ app_id: APP, insert_id: `e-${i}`, event_type: 'Play', time: T + i * 1000, server_upload_time: T + i * 1000, skip_user_properties_sync: false, ...fields }) as StoredEvent;

const events: StoredEvent[] = [
  // One identification gives the user a 20 KB profile; the events after carry it in their lines.
  event(0, { event_type: '$identify', user_id: 'big', user_properties: { $set: { notes: BIG } } }),
  ...Array.from({ length: 60 }, (_, i) => event(i + 1, { user_id: 'big', event_properties: { n: i } })),
  // Another user without a profile, and an event of no user at all.
  ...Array.from({ length: 20 }, (_, i) => event(i + 100, { user_id: 'small' })),
];

beforeAll(async () => {
  pair = await EnginePair.open('estimate');
  const path = join(pair.dir, 'segment-1.jsonl');
  writeFileSync(path, `${events.map((e) => pair.duck.journalLine(e)).join('\n')}\n`);
  for (const engine of [pair.duck, pair.ch]) await engine.loadSegment(path, 'segment-1');
}, 60_000);

afterAll(() => pair?.close());

test('the estimate of an export counts the profile each line carries, on both engines', async () => {
  for (const engine of [pair.duck, pair.ch]) {
    const hours = await engine.exportHours(APP, T - HOUR, T + 2 * HOUR);
    let written = 0;
    for await (const line of engine.exportLines(APP, T - HOUR, T + 2 * HOUR)) written += Buffer.byteLength(line);
    const estimate = estimatedExportBytes(hours);
    expect(written, 'the big profile in the lines').toBeGreaterThan(60 * BIG.length);
    expect(estimate, `${engine.constructor.name}'s estimate`).toBeGreaterThanOrEqual(written);
    expect(estimate, `${engine.constructor.name}'s estimate`).toBeLessThan(2 * written);
  }
}, 60_000);
