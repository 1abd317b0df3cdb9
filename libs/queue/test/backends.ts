import { Cluster, Redis } from 'ioredis';
import { startRedisServer, startRedisCluster } from '#testing';
import type { RedisConnectionConfig } from '../src/index.js';

/** A Redis the queue tests run against: one server, or a 3-primary Cluster. */
export interface Backend {
  readonly kind: BackendKind;
  readonly connection: RedisConnectionConfig;
  /** A plain client for the test's own bookkeeping (markers, versions, inspection). */
  client(): Redis | Cluster;
  /** Present for the single server: kill it and start an empty one on the same port. */
  restartEmpty?: () => Promise<void>;
  stop(): Promise<void>;
}

export type BackendKind = 'standalone' | 'cluster';
export const backendKinds: BackendKind[] = ['standalone', 'cluster'];

export async function startBackend(kind: BackendKind): Promise<Backend> {
  const clients: (Redis | Cluster)[] = [];
  const track = <C extends Redis | Cluster>(client: C): C => {
    clients.push(client);
    client.on('error', () => undefined);
    return client;
  };
  const closeClients = () => clients.forEach((c) => c.disconnect());
  if (kind === 'standalone') {
    const server = await startRedisServer();
    return {
      kind,
      connection: { url: server.url },
      client: () => track(new Redis(server.url)),
      restartEmpty: () => server.restartEmpty(),
      async stop() {
        closeClients();
        await server.stop();
      },
    };
  }
  const cluster = await startRedisCluster(3);
  return {
    kind,
    connection: { cluster: { nodes: cluster.nodes } },
    client: () => track(new Cluster(cluster.nodes)),
    async stop() {
      closeClients();
      await cluster.stop();
    },
  };
}
