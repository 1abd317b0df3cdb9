import { Cluster, Redis } from 'ioredis';
import {
  eventually,
  startRedisServer,
  startRedisCluster,
  startRedisSentinel,
  type RedisCluster,
  type RedisSentinel,
} from '#testing';
import {
  QueueConsumer,
  WorkQueue,
  type Handler,
  type QueueOptions,
  type RedisConnectionConfig,
} from '../src/index.js';

/**
 * A Redis the queue tests run against: one server, a 3-primary Cluster with a replica per
 * primary, or a primary with a replica behind a Sentinel.
 */
export interface Backend {
  readonly kind: BackendKind;
  readonly connection: RedisConnectionConfig;
  /** A plain client for the test's own bookkeeping (markers, versions, inspection). */
  client(): Redis | Cluster;
  /** Present for the single server: kill it and start an empty one on the same port. */
  restartEmpty?: () => Promise<void>;
  /** Present for the Cluster. */
  cluster?: RedisCluster;
  /** Present for Sentinel. */
  sentinel?: RedisSentinel;
  stop(): Promise<void>;
}

export type BackendKind = 'standalone' | 'cluster' | 'sentinel';
export const backendKinds: BackendKind[] = ['standalone', 'cluster', 'sentinel'];

export interface BackendOptions {
  /** cluster-node-timeout of the Cluster (its failure detection). */
  readonly nodeTimeoutMs?: number;
  /** Sentinel: the data nodes require this password. */
  readonly password?: string;
}

export async function startBackend(
  kind: BackendKind,
  options: BackendOptions = {},
): Promise<Backend> {
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
  if (kind === 'sentinel') {
    const sentinel = await startRedisSentinel({ replicas: 1, password: options.password });
    const redis = {
      sentinels: sentinel.sentinels,
      name: sentinel.masterName,
      ...(options.password && { password: options.password }),
    };
    return {
      kind,
      connection: { redis },
      client: () => track(new Redis({ ...redis, failoverDetector: true })),
      sentinel,
      async stop() {
        closeClients();
        await sentinel.stop();
      },
    };
  }
  const cluster = await startRedisCluster(3, { replicas: 1, nodeTimeoutMs: options.nodeTimeoutMs });
  return {
    kind,
    connection: { cluster: { nodes: cluster.nodes } },
    client: () => track(new Cluster(cluster.nodes)),
    cluster,
    async stop() {
      closeClients();
      await cluster.stop();
    },
  };
}

let queues = 0;

/** Options for a fresh queue (its own name) on the backend. */
export function queueOptions(
  backend: Backend,
  overrides: Partial<QueueOptions> = {},
): QueueOptions {
  return {
    name: `test-${process.pid}-${queues++}`,
    connection: backend.connection,
    shards: 4,
    lockDurationMs: 2_000,
    resetCheckIntervalMs: 200,
    ...overrides,
  };
}

export interface RunLog {
  key: string;
  failures: number;
  shard: number;
  start: number;
  end?: number;
}

/** A consumer whose handler is given per test and whose runs are logged in order. */
export function startConsumer(
  options: QueueOptions,
  handler: Handler = () => undefined,
  start: { concurrency?: number; shards?: number[] } = {},
): { consumer: QueueConsumer; runs: RunLog[] } {
  const runs: RunLog[] = [];
  const consumer = new QueueConsumer(options);
  consumer.start({
    concurrency: start.concurrency ?? 4,
    shards: start.shards,
    handler: async (key, ctx) => {
      const run: RunLog = { key, failures: ctx.failures, shard: ctx.shard, start: Date.now() };
      runs.push(run);
      try {
        return await handler(key, ctx);
      } finally {
        run.end = Date.now();
      }
    },
  });
  return { consumer, runs };
}

/** Waits until nothing is waiting, delayed or running in any shard. */
export async function waitForIdle(queue: WorkQueue): Promise<void> {
  await eventually('the queue to become idle', async () =>
    (await queue.depth()).every((d) => d.ready + d.delayed + d.running === 0),
  );
}

/** A promise with its resolve function, to hold a handler until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
