/**
 * Stable shard of a key: FNV-1a (32 bit) over its UTF-8 bytes. Every producer and consumer, in
 * any language or version, must agree on it, so it depends on nothing but the key and the count.
 */
export function shardOf(key: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(key, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/**
 * Where one shard lives: a BullMQ queue named `<name>-<shard>` under the prefix
 * `<prefix>:{<name>:<shard>}`. The braces are the Redis Cluster hash tag, so every key of the
 * shard (BullMQ's and the queue's own) is in one slot and BullMQ's scripts work on a Cluster.
 */
export interface ShardLocation {
  prefix: string;
  queueName: string;
}

export function shardLocation(prefix: string, name: string, shard: number): ShardLocation {
  return { prefix: `${prefix}:{${name}:${shard}}`, queueName: `${name}-${shard}` };
}

/** Redis keys of one shard that the queue reads or writes itself, beside BullMQ's scripts. */
export interface ShardKeys {
  /** BullMQ: run jobs due now, in add order. */
  wait: string;
  /** BullMQ: low-priority run jobs due now. */
  prioritized: string;
  /** BullMQ: jobs being handled. */
  active: string;
  /** BullMQ: timer jobs (RequeueAfter, backoff, AddAfter), scored by due time. */
  delayed: string;
  /** BullMQ: wake-up marker that idle workers block on. */
  marker: string;
  /** HASH key -> consecutive failures (client-go NumRequeues). */
  fail: string;
  /** HASH key -> id of the key's one failed BullMQ job kept for the dashboard (its last error). */
  failedJob: string;
  /** STRING random id written once; its loss reveals a Redis that lost the data. */
  epoch: string;
  /** STRING set for one lock duration after a loss: runs of the shard wait for it to expire. */
  hold: string;
  /** STRING the newest leader term that wrote to the shard; older terms' writes are refused. */
  fence: string;
  /**
   * STRING counter every client increments after its writes and before it waits for the replicas:
   * a primary whose counter is below a value a client saw confirmed has lost confirmed writes.
   */
  mark: string;
}

export function shardKeys(prefix: string, name: string, shard: number): ShardKeys {
  const location = shardLocation(prefix, name, shard);
  const bull = `${location.prefix}:${location.queueName}:`;
  const own = `${location.prefix}:`;
  return {
    wait: `${bull}wait`,
    prioritized: `${bull}prioritized`,
    active: `${bull}active`,
    delayed: `${bull}delayed`,
    marker: `${bull}marker`,
    fail: `${own}fail`,
    failedJob: `${own}failedjob`,
    epoch: `${own}epoch`,
    hold: `${own}hold`,
    fence: `${own}fence`,
    mark: `${own}mark`,
  };
}
