import { defineConfig } from 'vitest/config';

// One project per engine (`--project duckdb` or `--project clickhouse` runs one); each test
// file starts its server (a child process, as a user runs it) and, for ClickHouse, private
// ClickHouse and PostgreSQL servers. FUZZ_LONG=1 runs the long run instead of the quick suites.
const files = process.env.FUZZ_LONG ? ['long.fuzz.ts'] : ['*.test.ts'];
const project = (engine: string) => ({ extends: true as const, test: { name: engine, include: files, env: { FUZZ_ENGINE: engine } } });

export default defineConfig({
  test: {
    exclude: ['**/node_modules/**'],
    testTimeout: 240_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    projects: [project('duckdb'), project('clickhouse')],
  },
});
