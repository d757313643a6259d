// Once per vitest run with SVC_TEST_ENGINE=clickhouse: one ClickHouse and one PostgreSQL
// server on loopback for every test file (each harness then takes fresh databases on them);
// with SVC_TEST_CLICKHOUSE_SHARDS=N, a cluster of N ClickHouse shards instead.
import type { TestProject } from 'vitest/node';
import { startCluster } from '../../../../scripts/clickhouse/cluster.mjs';
import { startClickHouse } from '../../../../scripts/clickhouse/start.mjs';
import { startPostgres } from '../../../../scripts/postgres/start.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    clickhouseUrl: string;
    /** With shards: the further shards' URLs and the cluster that lists them all. */
    clickhouseShards: { shardUrls: string[][]; cluster: string } | undefined;
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (process.env.SVC_TEST_ENGINE !== 'clickhouse') return undefined;
  const shards = Number(process.env.SVC_TEST_CLICKHOUSE_SHARDS ?? 1);
  if (shards > 1) {
    const [cluster, postgres] = await Promise.all([startCluster({ shards }), startPostgres()]);
    const [first, ...others] = cluster.shardUrls();
    project.provide('clickhouseUrl', first![0]!);
    project.provide('clickhouseShards', { shardUrls: others, cluster: cluster.cluster });
    project.provide('postgresUrl', postgres.url);
    return async () => {
      await Promise.all([cluster.stop(), postgres.stop()]);
    };
  }
  const [clickhouse, postgres] = await Promise.all([startClickHouse(), startPostgres()]);
  project.provide('clickhouseUrl', clickhouse.url);
  project.provide('clickhouseShards', undefined);
  project.provide('postgresUrl', postgres.url);
  return async () => {
    await Promise.all([clickhouse.stop(), postgres.stop()]);
  };
}
