// Once per vitest run with SVC_TEST_ENGINE=clickhouse: one ClickHouse and one PostgreSQL
// server on loopback for every test file (each harness then takes fresh databases on them).
import type { TestProject } from 'vitest/node';
import { startClickHouse } from '../../../../scripts/clickhouse/start.mjs';
import { startPostgres } from '../../../../scripts/postgres/start.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    clickhouseUrl: string;
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (process.env.SVC_TEST_ENGINE !== 'clickhouse') return undefined;
  const [clickhouse, postgres] = await Promise.all([startClickHouse(), startPostgres()]);
  project.provide('clickhouseUrl', clickhouse.url);
  project.provide('postgresUrl', postgres.url);
  return async () => {
    await Promise.all([clickhouse.stop(), postgres.stop()]);
  };
}
