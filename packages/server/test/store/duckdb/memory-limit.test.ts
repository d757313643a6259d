// --duckdb-memory-limit reaches DuckDB: its buffer cache is bounded by it, not by DuckDB's
// default of 80% of the machine's memory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { DuckDbEngine } from '../../../src/store/duckdb/engine.js';

const limitOf = async (engine: DuckDbEngine) => (await engine.query("SELECT current_setting('memory_limit') AS limit_text"))[0]!.limit_text;

test('the engine opens DuckDB with the memory limit given, and with DuckDB default otherwise', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-memory-limit-'));
  try {
    const limited = await DuckDbEngine.open(dir, () => undefined, { memoryLimit: '256MB' });
    // DuckDB reports it in binary units: 256 MB = 244.1 MiB.
    expect(await limitOf(limited)).toBe('244.1 MiB');
    await limited.close();
    const unlimited = await DuckDbEngine.open(dir, () => undefined);
    expect(await limitOf(unlimited)).not.toBe('244.1 MiB');
    await unlimited.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
