// The engine a server is configured with: ClickHouse needs PostgreSQL for the entities and
// its own URL, and says so before it touches anything.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startServer } from '../../src/server.js';

const dataDir = mkdtempSync(join(tmpdir(), 'svc-engine-config-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test('engine clickhouse without postgresUrl or clickhouseUrl is refused with what is missing', async () => {
  const base = { dataDir, host: '127.0.0.1', port: 0, engine: 'clickhouse' as const };
  await expect(startServer({ ...base, clickhouseUrl: 'http://127.0.0.1:1' })).rejects.toThrow('The ClickHouse engine needs PostgreSQL for the other entities: give postgresUrl (--postgres-url)');
  // Nothing listens there: the check comes before any connection.
  await expect(startServer({ ...base, postgresUrl: 'postgres://svc@127.0.0.1:1/none' })).rejects.toThrow('The ClickHouse engine needs clickhouseUrl (--clickhouse-url)');
});
