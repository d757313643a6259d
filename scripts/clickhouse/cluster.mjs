// A cluster of ClickHouse servers on loopback for tests and benchmarks: `shards` shards of
// `replicas` replicas each, every server's remote_servers listing them as cluster `svc`, and a
// ZooKeeper (started here) when a shard has more than one replica. Each server can be killed
// as a crash would and started again on its data and ports, where its peers find it.
import { freePort } from '../loopback.mjs';
import { startZooKeeper } from '../zookeeper/start.mjs';
import { startClickHouse } from './start.mjs';

export const CLUSTER = 'svc';

export async function startCluster({ shards = 2, replicas = 1 } = {}) {
  const zookeeper = replicas > 1 ? await startZooKeeper() : undefined;
  const ports = [];
  for (let i = 0; i < shards * replicas; i++) ports.push({ http: await freePort(), tcp: await freePort(), interserver: await freePort() });
  const at = (shard, replica) => shard * replicas + replica;
  const clusters = { [CLUSTER]: Array.from({ length: shards }, (_, shard) => Array.from({ length: replicas }, (_, replica) => ports[at(shard, replica)].tcp)) };
  const start = (shard, replica, earlier) =>
    startClickHouse({
      ports: ports[at(shard, replica)],
      dir: earlier?.dir,
      keep: false,
      clusters,
      ...(zookeeper ? { zookeeper: zookeeper.port, macros: { shard: shard + 1, replica: `r${replica + 1}` } } : {}),
    });
  const servers = await Promise.all(ports.map((_, i) => start(Math.floor(i / replicas), i % replicas)));
  return {
    cluster: CLUSTER,
    /** Each shard's replicas' HTTP URLs, the first shard first. */
    shardUrls: () => Array.from({ length: shards }, (_, shard) => Array.from({ length: replicas }, (_, replica) => servers[at(shard, replica)].url)),
    server: (shard, replica = 0) => servers[at(shard, replica)],
    kill: (shard, replica = 0) => servers[at(shard, replica)].kill(),
    async restart(shard, replica = 0) {
      servers[at(shard, replica)] = await start(shard, replica, servers[at(shard, replica)]);
    },
    async stop() {
      await Promise.all(servers.map((server) => server.stop()));
      await zookeeper?.stop();
    },
  };
}
