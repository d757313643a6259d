import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The files that run a server (its engine) and so run again with SVC_TEST_ENGINE=clickhouse;
 * the others test code that does not depend on the engine, or one engine on purpose
 * (DuckDbEngine, the DuckDB dialect, test/store/clickhouse with its own servers).
 */
const ENGINE_TESTS = [
  'http/abuse',
  'annotations/annotations',
  'ingestion/attribution-restart',
  'ingestion/browser-sdk',
  'cohorts/cohorts',
  'http/credentials',
  'deletion/deletion',
  'store/durability',
  'store/engine-restart',
  'delivery-metrics/event-streaming',
  'delivery-metrics/event-streaming-restart',
  'experiment/experiment',
  'export/export',
  'export/import',
  'feedback/feedback',
  'reporting/funnel-semantics',
  'ingestion/ingestion',
  'ingestion/legacy',
  'official-sdk',
  'reporting/reporting',
  'reporting/agreement',
  'reporting/retention',
  'reporting/realtime',
  'reporting/revenue-ltv',
  'reporting/chart-results',
  'reporting/user-lookup',
  'shared/secrets-at-rest',
  'session-replays/session-replays',
  'taxonomy/taxonomy',
  'taxonomy/taxonomy-plan',
  'ingestion/throttle',
  'usermap/usermap',
].map((name) => `test/${name}.test.ts`);

/**
 * With SVC_TEST_CLICKHOUSE_SHARDS=2 the files run again on two ClickHouse shards: those whose
 * requests read, merge or delete the split tables (the whole list above passes on shards too:
 * 32 files, 358 tests in about 6 minutes on 2 cores, the time of the ClickHouse round).
 */
const SHARDED_TESTS = [
  'store/durability',
  'reporting/reporting',
  'reporting/agreement',
  'reporting/user-lookup',
  'cohorts/cohorts',
  'deletion/deletion',
  'usermap/usermap',
  'taxonomy/taxonomy-plan',
  'delivery-metrics/event-streaming',
  'export/export',
].map((name) => `test/${name}.test.ts`);

const clickhouse = process.env.SVC_TEST_ENGINE === 'clickhouse';
const sharded = clickhouse && Number(process.env.SVC_TEST_CLICKHOUSE_SHARDS ?? 1) > 1;

// Each test file starts its own server and Prism proxies (a few seconds on 2 cores).
export default defineConfig({
  test: {
    include: sharded ? SHARDED_TESTS : clickhouse ? ENGINE_TESTS : ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    pool: 'forks',
    // The server runs its engine in a child process, which imports the TypeScript sources.
    execArgv: ['--import', fileURLToPath(new URL('./test/support/typescript.mjs', import.meta.url))],
    maxWorkers: 2,
    typecheck: {
      include: ['test/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
  },
});
