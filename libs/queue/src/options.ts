import type { ClusterNode, ClusterOptions, RedisOptions } from 'ioredis';
import type { Registry } from 'prom-client';

/**
 * Where Redis is. `url` accepts redis:// and rediss:// (TLS) with user and password; `redis` adds or
 * replaces ioredis options (with `sentinels` and `name`, the primary the Sentinels name); `cluster`
 * connects to a Redis Cluster through any of its nodes.
 */
export interface RedisConnectionConfig {
  url?: string;
  redis?: RedisOptions;
  cluster?: { nodes: ClusterNode[]; options?: ClusterOptions };
}

export interface BackoffOptions {
  /** Delay after the first failure (client-go ItemExponentialFailureRateLimiter base). */
  baseMs: number;
  /** Upper bound of the doubling delay. */
  maxMs: number;
}

export interface QueueOptions {
  /** Queue name: the `name` label of the workqueue metrics and part of every Redis key. */
  name: string;
  /** The `controller` label of the metrics; defaults to the queue name (as controller-runtime). */
  controller?: string;
  connection: RedisConnectionConfig;
  /** Prefix of every Redis key (default `wq`). */
  prefix?: string;
  /** Number of virtual shards. Fixed for the life of the data: changing it moves keys. */
  shards?: number;
  /** How long a run owns its key without a heartbeat before another consumer may take it. */
  lockDurationMs?: number;
  backoff?: BackoffOptions;
  /** How often every client checks that Redis still holds the queue (see the `reset` event). */
  resetCheckIntervalMs?: number;
  /** Registry for the workqueue_* metrics; none means no metrics. */
  registry?: Registry;
}

export type ResolvedQueueOptions = Required<Omit<QueueOptions, 'registry' | 'controller'>> & {
  controller: string;
  registry: Registry | undefined;
};

export const queueDefaults = {
  prefix: 'wq',
  shards: 16,
  lockDurationMs: 30_000,
  backoff: { baseMs: 5, maxMs: 1_000_000 },
  resetCheckIntervalMs: 5_000,
} as const;

/** Fills defaults and rejects bad values with an error that names the option. */
export function resolveQueueOptions(options: QueueOptions): ResolvedQueueOptions {
  const resolved: ResolvedQueueOptions = {
    name: options.name,
    controller: options.controller ?? options.name,
    connection: options.connection,
    prefix: options.prefix ?? queueDefaults.prefix,
    shards: options.shards ?? queueDefaults.shards,
    lockDurationMs: options.lockDurationMs ?? queueDefaults.lockDurationMs,
    backoff: options.backoff ?? { ...queueDefaults.backoff },
    resetCheckIntervalMs: options.resetCheckIntervalMs ?? queueDefaults.resetCheckIntervalMs,
    registry: options.registry,
  };
  requireName('name', resolved.name);
  requireName('prefix', resolved.prefix);
  requireInteger('shards', resolved.shards, 1);
  requireInteger('lockDurationMs', resolved.lockDurationMs, 100);
  requireInteger('backoff.baseMs', resolved.backoff.baseMs, 1);
  requireInteger('backoff.maxMs', resolved.backoff.maxMs, resolved.backoff.baseMs);
  requireInteger('resetCheckIntervalMs', resolved.resetCheckIntervalMs, 10);
  const { url, redis, cluster } = resolved.connection;
  if (url === undefined && redis === undefined && cluster === undefined) {
    throw new Error('queue option connection: give url, redis or cluster');
  }
  if (cluster !== undefined && cluster.nodes.length === 0) {
    throw new Error('queue option connection.cluster.nodes: at least one node is required');
  }
  return resolved;
}

function requireName(option: string, value: string): void {
  // Braces would move the Redis Cluster hash tag away from the shard number.
  if (typeof value !== 'string' || value === '' || /[{}\s]/.test(value)) {
    throw new Error(`queue option ${option}: non-empty, without braces or spaces (got ${value})`);
  }
}

function requireInteger(option: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`queue option ${option}: an integer >= ${min} (got ${value})`);
  }
}
