// vitest globalSetup: one ClickHouse for the run, its HTTP URL provided as `clickhouseUrl`
// (`inject('clickhouseUrl')` in a test). With CLICKHOUSE_URL set, that server is used instead.
import { startClickHouse } from './start.mjs';

export default async function setup(project) {
  if (process.env.CLICKHOUSE_URL) {
    project.provide('clickhouseUrl', process.env.CLICKHOUSE_URL);
    return undefined;
  }
  const server = await startClickHouse();
  project.provide('clickhouseUrl', server.url);
  return () => server.stop();
}
