// The same events in DuckDB and in ClickHouse 18.16 (Debian's, started on loopback), each
// engine loading the same journal segment as the server loads it: the same svc_ids and
// ingestion order, profile versions on both.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ClickHouseServer, startClickHouse } from '../../../../../scripts/clickhouse/start.mjs';
import { ClickHouseEngine } from '../../../src/store/clickhouse/engine.js';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';
import { EVENT_COLUMNS } from '../../../src/store/journal-line.js';
import type { StoredEvent } from '../../../src/store/types.js';
import type { UploadEvent } from '../../reporting/dataset.js';
import { memorySession } from './memory-session.js';

export interface Engines {
  clickhouse: ClickHouseServer;
  ch: ClickHouseEngine;
  duck: DuckDbEngine;
  close(): Promise<void>;
}

/** An upload as stored after the ingestion rules (the fields the seeded datasets use). */
export function stored(upload: UploadEvent, index: number, appId: number, uploadedAt: number): StoredEvent {
  const event = Object.fromEntries(Object.keys(EVENT_COLUMNS).map((name) => [name, null])) as unknown as StoredEvent;
  return { ...event, ...upload, app_id: appId, server_upload_time: uploadedAt + index, skip_user_properties_sync: false } as StoredEvent;
}

export async function loadEngines(events: StoredEvent[], database: string): Promise<Engines> {
  const clickhouse = await startClickHouse();
  const dir = mkdtempSync(join(tmpdir(), `svc-ch-${database}-`));
  const duck = await DuckDbEngine.open(dir);
  const segment = join(dir, 'segment-1.jsonl');
  writeFileSync(segment, `${events.map((event) => duck.journalLine(event)).join('\n')}\n`);
  await duck.loadSegment(segment, 'segment-1');
  const session = await memorySession();
  const ch = await ClickHouseEngine.open({ url: clickhouse.url, database }, session);
  await ch.loadSegment(segment, 'segment-1');
  return {
    clickhouse,
    ch,
    duck,
    async close() {
      await ch.close();
      session.close();
      await duck.close();
      await clickhouse.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
