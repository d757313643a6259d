// The same events in DuckDB (loaded through a journal segment, as the server loads them) and in
// ClickHouse 18.16 (Debian's, started on loopback): the resolved events as DuckDB holds them
// (svc_id and ingestion order) are inserted into ClickHouse.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ClickHouseServer, startClickHouse } from '../../../../scripts/clickhouse/start.mjs';
import { ClickHouseEvents, type ResolvedEvent } from '../../src/store/clickhouse/events.js';
import { DuckDbEngine, EVENT_COLUMNS } from '../../src/store/duckdb.js';
import type { StoredEvent } from '../../src/store/types.js';
import type { UploadEvent } from '../reporting/dataset.js';

export interface Engines {
  clickhouse: ClickHouseServer;
  ch: ClickHouseEvents;
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
  const appIds = [...new Set(events.map((event) => event.app_id))];
  const ch = await ClickHouseEvents.open({ url: clickhouse.url, database });
  for (const appId of appIds) {
    const loaded = await duck.events(appId);
    const order = await duck.query(`SELECT ingest_seq FROM events WHERE app_id = ${appId} ORDER BY ingest_seq`);
    await ch.insert(loaded.map((event, i): ResolvedEvent => ({ ...event, ingest_seq: order[i]!.ingest_seq as number })));
  }
  return {
    clickhouse,
    ch,
    duck,
    async close() {
      await ch.close();
      await duck.close();
      await clickhouse.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
