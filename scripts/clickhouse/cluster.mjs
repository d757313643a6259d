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
  // Every server's ports are chosen before any starts (each lists the others): one taken
  // meanwhile by another process starts the whole cluster again on new ones.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServers(shards, replicas, zookeeper);
    } catch (error) {
      if (error.code !== 'EADDRINUSE' || attempt === 5) {
        await zookeeper?.stop();
        throw error;
      }
    }
  }
}

async function startServers(shards, replicas, zookeeper) {
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
  const starts = await Promise.allSettled(ports.map((_, i) => start(Math.floor(i / replicas), i % replicas)));
  const failed = starts.find((start) => start.status === 'rejected');
  if (failed) {
    await Promise.all(starts.map((start) => start.status === 'fulfilled' && start.value.stop()));
    throw failed.reason;
  }
  const servers = starts.map((start) => start.value);
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
