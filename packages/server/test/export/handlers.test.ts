// The export's refusals that depend on sizes and the archive's shape, with a made-up store:
// the 4 GB limit (estimated before the answer starts), and hours read only when the archive
// reaches them.
import type { Readable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { DEFAULT_EXPORT_MAX_BYTES, ExportHandlers } from '../../src/export/handlers.js';
import { exportRange, hourStart } from '../../src/export/hours.js';
import { exportLine, exportTime, exportUuid } from '../../src/store/export-lines.js';
import { HOUR_MS } from '../../src/store/exported-events.js';
import type { ExportedEvents, ExportHourSummary } from '../../src/store/types.js';

const request = (start: string, end: string) => ({ operationId: 'getEventExport', query: { start, end }, caller: { project: { app_id: 42 } } }) as never;

function store(hours: ExportHourSummary[], read: number[] = [], stopped: number[] = [], chunks = 1): ExportedEvents {
  return {
    exportHours: async () => hours,
    async *exportLines(_appId, fromMs) {
      read.push(fromMs);
      try {
        for (let chunk = 0; chunk < chunks; chunk++) yield `${'{"event_type":"x"}\n'.repeat(1000)}`;
      } finally {
        stopped.push(fromMs);
      }
    },
  };
}

describe('hours', () => {
  test('YYYYMMDDTHH, with a one-digit hour too; not a day that does not exist', () => {
    expect(hourStart('20261120T05')).toBe(Date.UTC(2026, 10, 20, 5));
    expect(hourStart('20261120T5')).toBe(Date.UTC(2026, 10, 20, 5));
    for (const text of ['20261120T24', '20260229T00', '20261320T00', '00991120T00', '20261120', '2026112T05', ' 20261120T05']) expect(hourStart(text), text).toBeUndefined();
  });

  test('both ends inclusive, at most 365 days', () => {
    expect(exportRange('20261120T00', '20261120T23')).toEqual({ fromMs: Date.UTC(2026, 10, 20), toMs: Date.UTC(2026, 10, 21) });
    expect(exportRange('20251121T00', '20261120T23')).toEqual({ fromMs: Date.UTC(2025, 10, 21), toMs: Date.UTC(2026, 10, 21) });
    expect(exportRange('20251120T23', '20261120T23')).toEqual({ problem: 'The range from 20251120T23 to 20261120T23 is longer than 365 days' });
  });
});

describe('lines', () => {
  test('times as the platform writes them, uuids from the event place', () => {
    expect(exportTime(Date.UTC(2026, 0, 2, 3, 4, 5, 6))).toBe('"2026-01-02 03:04:05.006000"');
    expect(exportUuid(187520, 41)).toBe('0002dc80-0000-8000-8000-000000000029');
    expect(exportUuid(1, 2 ** 53 - 1)).toBe('00000001-1fff-8fff-8fff-00000000ffff');
  });

  test('the JSON columns are spliced in as stored; texts are escaped', () => {
    const row = { app_id: 1, ingest_seq: 1, time: 0, server_upload_time: 0, event_type: 'a"b', event_properties: '{"x":[1,2]}' } as Record<string, unknown>;
    const event = JSON.parse(exportLine(row));
    expect(event.event_type).toBe('a"b');
    expect(event.event_properties).toEqual({ x: [1, 2] });
    expect(event.user_properties).toEqual({});
  });
});

describe('the 4 GB limit', () => {
  test('an export estimated above it is refused before it starts', async () => {
    const big: ExportHourSummary[] = [{ hourMs: 0, events: 3_000_000, jsonBytes: 2 ** 31 }];
    const answer = await new ExportHandlers(store(big)).getEventExport(request('19700101T00', '19700101T00'));
    expect(answer).toEqual({ status: 400, body: { code: 400, error: 'The export from 19700101T00 to 19700101T00 is larger than 4 GB (about 5.4 GB): choose a shorter range' } });
    expect(DEFAULT_EXPORT_MAX_BYTES).toBe(2 ** 32);
  });

  test('below it the archive is answered; an hour is read when the archive reaches it', async () => {
    const read: number[] = [];
    const hours = [0, 2].map((i) => ({ hourMs: i * HOUR_MS, events: 1, jsonBytes: 10 }));
    const answer = await new ExportHandlers(store(hours, read)).getEventExport(request('19700101T00', '19700101T02'));
    expect(answer.status).toBe(200);
    expect(read).toEqual([]);
    const chunks: Buffer[] = [];
    for await (const chunk of answer.body as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
    expect(read).toEqual([0, 2 * HOUR_MS]);
    expect(Buffer.concat(chunks).subarray(0, 4)).toEqual(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
  });
});

describe('a client that goes away', () => {
  test('stops the hour being read', async () => {
    // A thousand chunks: far more than the archive reads ahead of what was sent.
    const [read, stopped]: number[][] = [[], []];
    const answer = await new ExportHandlers(store([{ hourMs: 0, events: 1_000_000, jsonBytes: 0 }], read, stopped, 1000)).getEventExport(request('19700101T00', '19700101T00'));
    const archive = answer.body as unknown as Readable;
    await new Promise((resolve) => archive.once('data', resolve));
    archive.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(read).toEqual([0]);
    expect(stopped).toEqual([0]);
  });
});
