// Two replicas of one shard for tests: ZooKeeper and two ClickHouse 18.16 servers on loopback
// (macros shard 1, replicas r1 and r2), each killed as a crash would and started again on its
// data and ports, where its peer finds it.
import { type ClickHouseServer, startClickHouse } from '../../../../../scripts/clickhouse/start.mjs';
import { startZooKeeper, type ZooKeeperServer } from '../../../../../scripts/zookeeper/start.mjs';

export class ReplicaPair {
  private constructor(
    private readonly zookeeper: ZooKeeperServer,
    private readonly servers: ClickHouseServer[],
    private readonly database: string,
  ) {}

  static async start(database: string): Promise<ReplicaPair> {
    const zookeeper = await startZooKeeper();
    const pair = new ReplicaPair(zookeeper, [], database);
    pair.servers.push(...(await Promise.all([0, 1].map((index) => pair.startReplica(index)))));
    return pair;
  }

  url(index: number): string {
    return this.servers[index]!.url;
  }

  kill(index: number): Promise<void> {
    return this.servers[index]!.kill();
  }

  async restart(index: number): Promise<void> {
    this.servers[index] = await this.startReplica(index, this.servers[index]);
  }

  /** A statement on one replica, outside the engine; its answer's text. */
  async on(index: number, sql: string): Promise<string> {
    const response = await fetch(`${this.url(index)}/?database=${this.database}`, { method: 'POST', body: sql });
    const text = await response.text();
    if (!response.ok) throw new Error(text);
    return text.trim();
  }

  /** Waits until the replica has fetched what the other wrote, to every table. */
  async synced(index: number): Promise<void> {
    for (const table of (await this.on(index, 'SELECT table FROM system.replicas WHERE database = currentDatabase()')).split('\n')) await this.on(index, `SYSTEM SYNC REPLICA ${table}`);
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.stop()));
    await this.zookeeper.stop();
  }

  private startReplica(index: number, earlier?: ClickHouseServer): Promise<ClickHouseServer> {
    return startClickHouse({ zookeeper: this.zookeeper.port, macros: { shard: 1, replica: `r${index + 1}` }, dir: earlier?.dir, keep: false, ports: earlier?.ports });
  }
}
