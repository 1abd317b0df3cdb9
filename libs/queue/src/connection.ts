import { Cluster, Redis } from 'ioredis';
import type { RedisConnectionConfig } from './options.js';

export type RedisClient = Redis | Cluster;

/**
 * Opens a client. Commands fail after a bounded number of reconnect attempts instead of waiting
 * forever, so a lost Redis surfaces as errors the queue retries, never as a hung promise.
 */
export function createRedisClient(config: RedisConnectionConfig): RedisClient {
  const common = { maxRetriesPerRequest: 3, retryStrategy: reconnectDelay };
  if (config.cluster) {
    return new Cluster(config.cluster.nodes, {
      ...config.cluster.options,
      redisOptions: { ...common, ...config.cluster.options?.redisOptions },
      clusterRetryStrategy: reconnectDelay,
    });
  }
  if (config.url !== undefined) return new Redis(config.url, { ...common, ...config.redis });
  return new Redis({ ...common, ...config.redis });
}

/** Reconnect forever with a capped delay: Redis coming back is the normal end of an outage. */
function reconnectDelay(attempt: number): number {
  return Math.min(50 * attempt, 2_000);
}

/** A second connection to the same Redis, for blocking commands that would stall the first. */
export function duplicateClient(client: RedisClient): RedisClient {
  return client instanceof Cluster ? client.duplicate() : client.duplicate();
}
