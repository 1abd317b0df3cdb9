import { Cluster, Redis } from 'ioredis';
import { loadWorkerConfig, redisConnection } from '#config';
import { createRedisClient } from '#queue';
import { startRedisCluster, type RedisCluster } from './redis-cluster.js';
import { probeOptions, startRedisServer, type RedisServer, type RedisTls } from './redis-server.js';
import { startRedisSentinel, type RedisSentinel } from './redis-sentinel.js';

/** The three ways the operator reaches Redis (REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS). */
export type RedisMode = 'standalone' | 'cluster' | 'sentinel';
export const REDIS_MODES: readonly RedisMode[] = ['standalone', 'cluster', 'sentinel'];

export interface RedisDeploymentOptions {
  readonly password?: string;
  readonly tls?: RedisTls;
  /** Cluster: primaries (default 3). */
  readonly primaries?: number;
  /** Cluster: replicas per primary; Sentinel: replicas of the primary (default 1 for both). */
  readonly replicas?: number;
  /** Cluster: cluster-node-timeout (default 2000, so that failure detection takes seconds). */
  readonly nodeTimeoutMs?: number;
  /** Sentinel: Sentinel processes (default 1). */
  readonly sentinels?: number;
  /** Sentinel: the Sentinels' own password (none by default). */
  readonly sentinelPassword?: string;
}

/** A private Redis in one of the three modes, with what an operator process needs to reach it. */
export interface RedisDeployment {
  readonly mode: RedisMode;
  /** The environment that points an operator process at it (without the password). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Where it is, for people: the server's URL, `redis+cluster://` with the primaries, or
   * `redis+sentinel://` with the Sentinels and the master name (as the operator logs it).
   */
  readonly address: string;
  readonly server?: RedisServer;
  readonly cluster?: RedisCluster;
  readonly sentinel?: RedisSentinel;
  /** A client of the caller's own in the same mode (the caller disconnects it). */
  client(): Redis | Cluster;
  stop(): Promise<void>;
}

/** Starts a Redis of the given mode on free loopback ports from the redis-server on PATH. */
export async function startRedisDeployment(
  mode: RedisMode,
  options: RedisDeploymentOptions = {},
): Promise<RedisDeployment> {
  const auth = { password: options.password, tls: options.tls };
  const tlsEnv: Record<string, string> = options.tls ? { REDIS_TLS: 'true' } : {};
  const track = <C extends Redis | Cluster>(client: C): C => {
    client.on('error', () => undefined);
    return client;
  };
  if (mode === 'cluster') {
    const cluster = await startRedisCluster(options.primaries ?? 3, {
      ...auth,
      replicas: options.replicas ?? 1,
      nodeTimeoutMs: options.nodeTimeoutMs ?? 2000,
    });
    const nodes = cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',');
    return {
      mode,
      env: { REDIS_CLUSTER_NODES: nodes, ...tlsEnv },
      address: `${options.tls ? 'rediss' : 'redis'}+cluster://${nodes}`,
      cluster,
      client: () =>
        track(
          new Cluster(cluster.nodes, {
            redisOptions: probeOptions(auth),
            slotsRefreshTimeout: 2000,
          }),
        ),
      stop: () => cluster.stop(),
    };
  }
  if (mode === 'sentinel') {
    const sentinel = await startRedisSentinel({
      ...auth,
      replicas: options.replicas ?? 1,
      sentinels: options.sentinels ?? 1,
      sentinelPassword: options.sentinelPassword,
    });
    const sentinels = sentinel.sentinels.map((n) => `${n.host}:${n.port}`).join(',');
    return {
      mode,
      env: {
        REDIS_SENTINELS: sentinels,
        REDIS_SENTINEL_MASTER: sentinel.masterName,
        ...tlsEnv,
      },
      address: `${options.tls ? 'rediss' : 'redis'}+sentinel://${sentinels}/${sentinel.masterName}`,
      sentinel,
      client: () =>
        track(
          new Redis({
            sentinels: sentinel.sentinels,
            name: sentinel.masterName,
            failoverDetector: true,
            ...probeOptions(auth),
            ...(options.sentinelPassword && { sentinelPassword: options.sentinelPassword }),
            ...(auth.tls && {
              enableTLSForSentinelMode: true,
              sentinelTLS: { rejectUnauthorized: false },
            }),
          }),
        ),
      stop: () => sentinel.stop(),
    };
  }
  const server = await startRedisServer([], auth);
  return {
    mode,
    env: { REDIS_URL: server.url },
    address: server.url,
    server,
    client: () => track(new Redis(server.url, probeOptions(auth))),
    stop: () => server.stop(),
  };
}

/** The variables that say where Redis is and how to log in (libs/config). */
const REDIS_VARIABLES = [
  'REDIS_URL',
  'REDIS_CLUSTER_NODES',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_MASTER',
  'REDIS_USERNAME',
  'REDIS_PASSWORD',
  'REDIS_SENTINEL_PASSWORD',
  'REDIS_TLS',
] as const;

/**
 * A Redis someone else runs, in whatever mode these variables select (they are validated as the
 * operator validates them: a bad combination throws the operator's ConfigError). Stopping it
 * does nothing.
 */
export function externalRedis(
  variables: Readonly<Record<string, string | undefined>>,
): RedisDeployment {
  const env: Record<string, string> = {};
  for (const name of REDIS_VARIABLES) {
    const value = variables[name];
    if (value) env[name] = value;
  }
  const { redis } = loadWorkerConfig(env);
  return {
    mode: redis.mode,
    env,
    address: redis.address,
    client: () => createRedisClient(redisConnection(redis)).on('error', () => undefined),
    stop: async () => undefined,
  };
}
