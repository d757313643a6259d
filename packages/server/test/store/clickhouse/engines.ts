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

/** Both engines over an empty data directory and database (entities in an in-memory session); `reopen` restarts them on the same data. */
export class EnginePair implements Engines {
  private constructor(
    readonly clickhouse: ClickHouseServer,
    readonly dir: string,
    readonly database: string,
    private readonly session: Awaited<ReturnType<typeof memorySession>>,
    public duck: DuckDbEngine,
    public ch: ClickHouseEngine,
  ) {}

  static async open(database: string): Promise<EnginePair> {
    const clickhouse = await startClickHouse();
    const dir = mkdtempSync(join(tmpdir(), `svc-ch-${database}-`));
    const session = await memorySession();
    return new EnginePair(clickhouse, dir, database, session, await DuckDbEngine.open(dir), await ClickHouseEngine.open({ url: clickhouse.url, database }, session));
  }

  async reopen(): Promise<void> {
    await this.duck.close();
    await this.ch.close();
    this.duck = await DuckDbEngine.open(this.dir);
    this.ch = await ClickHouseEngine.open({ url: this.clickhouse.url, database: this.database }, this.session);
  }

  /** A statement on the ClickHouse database, outside the engine (a crash's traces, say). */
  async command(sql: string): Promise<void> {
    const response = await fetch(`${this.clickhouse.url}/?database=${this.database}`, { method: 'POST', body: sql });
    if (!response.ok) throw new Error(await response.text());
  }

  async waitForMutations(): Promise<void> {
    while (Number((await this.ch.query('SELECT count() AS n FROM system.mutations WHERE is_done = 0'))[0]!.n) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  async close(): Promise<void> {
    await this.ch.close();
    this.session.close();
    await this.duck.close();
    await this.clickhouse.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** An upload as stored after the ingestion rules (the fields the seeded datasets use). */
export function stored(upload: UploadEvent, index: number, appId: number, uploadedAt: number): StoredEvent {
  const event = Object.fromEntries(Object.keys(EVENT_COLUMNS).map((name) => [name, null])) as unknown as StoredEvent;
  return { ...event, ...upload, app_id: appId, server_upload_time: uploadedAt + index, skip_user_properties_sync: false } as StoredEvent;
}

export async function loadEngines(events: StoredEvent[], database: string): Promise<Engines> {
  const pair = await EnginePair.open(database);
  const segment = join(pair.dir, 'segment-1.jsonl');
  writeFileSync(segment, `${events.map((event) => pair.duck.journalLine(event)).join('\n')}\n`);
  await pair.duck.loadSegment(segment, 'segment-1');
  await pair.ch.loadSegment(segment, 'segment-1');
  return pair;
}
