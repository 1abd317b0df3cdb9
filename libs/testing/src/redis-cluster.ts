import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

export interface RedisCluster {
  /** The primaries, for ioredis `new Cluster(nodes)`. */
  readonly nodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

/**
 * Starts a Redis Cluster of `size` primaries (no replicas) from the Debian redis-server on free
 * loopback ports, so a test can check that every multi-key command stays inside one hash slot.
 */
export async function startRedisCluster(size = 3): Promise<RedisCluster> {
  const servers: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  try {
    for (let i = 0; i < size; i++) {
      // The bus port is chosen too: port + 10000, Redis' default, may be taken or out of range.
      const busPort = String(await freePort());
      servers.push(
        await startRedisServer([
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          busPort,
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          '5000',
        ]),
      );
    }
    const nodes = servers.map((s) => ({ host: '127.0.0.1', port: s.port }));
    const create = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `${n.host}:${n.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0) {
      throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    }
    for (const node of nodes) await waitForClusterOk(node.port);
    return { nodes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Every node must know the whole slot map before clients are pointed at the cluster. */
async function waitForClusterOk(port: number): Promise<void> {
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  try {
    const deadline = Date.now() + 30_000;
    while (!(await client.cluster('INFO')).includes('cluster_state:ok')) {
      if (Date.now() > deadline) throw new Error(`redis cluster node ${port} is not ok`);
      await sleep(100);
    }
  } finally {
    client.disconnect();
  }
}
