import type { Cluster, Redis } from 'ioredis';
import { queueDefaults, shardKeys } from '#queue';
import type { OperatorSystem } from './operator-system.js';
import type { PromoteBy } from './redis-cluster.js';

/** What a Redis failover fault did, for a test's or a soak's report. */
export interface RedisFailover {
  readonly mode: 'cluster' | 'sentinel';
  /** Port of the primary that was killed. */
  readonly killed: number;
  /** Port of the replica that became the primary. */
  readonly promoted: number;
  /** The queue shard whose primary was killed (Cluster). */
  readonly shard?: number;
  /** When the primary was killed (ms since the epoch). */
  readonly killedAt: number;
  /** When the replica served as the primary (ms since the epoch). */
  readonly promotedAt: number;
}

export interface ClusterFailoverOptions {
  /** How the replica takes over: CLUSTER FAILOVER FORCE, or the cluster's failure detection. */
  readonly promoteBy?: PromoteBy;
  /** The shard whose primary to kill; default: the busiest shard right now. */
  readonly shard?: number;
}

/**
 * Fault: kills (SIGKILL) the Redis Cluster primary that serves the busiest queue shard of a running
 * system (the one with the most keys waiting or running) and resolves once its replica serves the
 * shard's slot. The system must run on a Cluster with replicas (`redisMode: 'cluster'`).
 */
export async function failOverClusterPrimary(
  sys: OperatorSystem,
  options: ClusterFailoverOptions = {},
): Promise<RedisFailover> {
  const cluster = sys.redisDeployment.cluster;
  if (!cluster) throw new Error(`the system's Redis is ${sys.redisDeployment.mode}, not a Cluster`);
  const shard = options.shard ?? (await busiestShard(sys));
  const slot = await cluster.slotOf(shardKeys(queueDefaults.prefix, sys.queue.name, shard).epoch);
  const killedAt = Date.now();
  const { killed, promoted } = await cluster.killPrimary(
    slot,
    options.promoteBy ?? 'failure-detection',
  );
  return { mode: 'cluster', killed, promoted, shard, killedAt, promotedAt: Date.now() };
}

/**
 * Fault: kills (SIGKILL) the primary the Sentinels name for a running system and resolves once
 * they name its promoted replica. The system must run on Sentinel (`redisMode: 'sentinel'`).
 */
export async function failOverSentinelPrimary(sys: OperatorSystem): Promise<RedisFailover> {
  const sentinel = sys.redisDeployment.sentinel;
  if (!sentinel) throw new Error(`the system's Redis is ${sys.redisDeployment.mode}, not Sentinel`);
  const killedAt = Date.now();
  const { killed, promoted } = await sentinel.killPrimary();
  return { mode: 'sentinel', killed, promoted, killedAt, promotedAt: Date.now() };
}

/** Fault: the failover of the running system's Redis primary, whichever the mode has. */
export function failOverRedisPrimary(sys: OperatorSystem): Promise<RedisFailover> {
  const { mode } = sys.redisDeployment;
  if (mode === 'cluster') return failOverClusterPrimary(sys);
  if (mode === 'sentinel') return failOverSentinelPrimary(sys);
  return Promise.reject(new Error('a standalone Redis has no replica to fail over to'));
}

/** The shard with the most keys waiting or running (ties: the lowest). */
async function busiestShard(sys: OperatorSystem): Promise<number> {
  const client = sys.redisDeployment.client();
  try {
    const loads = await Promise.all(
      Array.from({ length: sys.queue.shards }, (_, shard) => shardLoad(client, sys, shard)),
    );
    return loads.indexOf(Math.max(...loads));
  } finally {
    client.disconnect();
  }
}

async function shardLoad(client: Redis | Cluster, sys: OperatorSystem, shard: number) {
  const keys = shardKeys(queueDefaults.prefix, sys.queue.name, shard);
  const replies = (await client
    .pipeline()
    .llen(keys.active)
    .llen(keys.wait)
    .zcard(keys.prioritized)
    .exec()) as [Error | null, number][];
  return replies.reduce((total, [, n]) => total + Number(n), 0);
}
