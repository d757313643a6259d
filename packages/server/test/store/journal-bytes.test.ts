// The journal's bytes are each record's journalLine and a newline, in order, whatever the
// characters (multi-byte UTF-8, escapes) and however long a line (one longer than a chunk).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { journalLine } from '../../src/store/journal-line.js';
import { JournalledStore } from '../../src/store/journalled-store.js';
import type { Engine, JournalRecord } from '../../src/store/types.js';
import { stored } from './clickhouse/engines.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a segment holds the lines of the appended records, byte for byte', async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-journal-bytes-'));
  const loaded: Buffer[] = [];
  const engine = {
    isLoaded: async () => false,
    loadSegment: async (path: string) => void loaded.push(readFileSync(path)),
    close: async () => undefined,
  } as unknown as Engine;
  const store = await JournalledStore.open(engine, dir, { loadIntervalMs: 3_600_000, segmentBytes: 1 << 30, log: () => undefined });
  const texts = ['plain', 'é ü ß', '日本語のテキスト', '😀 and \ud83d\ude00', 'quote " backslash \\ tab \t nul \u0000', 'lone \ud800 surrogate', 'x'.repeat(70_000), '€'.repeat(30_000)];
  const records: JournalRecord[] = Array.from({ length: 3000 }, (_, i) =>
    stored({ event_type: texts[i % texts.length]!, user_id: `user-${i}`, time: 1_700_000_000_000 - i, event_properties: { text: texts[(i * 7) % texts.length], n: [1e21, -0, 0.1, i] } }, i, 1, 1_700_000_000_000),
  );
  records.push({ held_attribution: { id: 'h', app_id: 1, received_at: 5, event: { idfa: 'ä', nested: { a: null } } } });
  await store.append(records.slice(0, 1000));
  await store.append(records.slice(1000));
  await store.flush();
  expect(Buffer.concat(loaded).equals(Buffer.from(records.map((record) => `${journalLine(record)}\n`).join('')))).toBe(true);
  await store.close();
});
