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

/** The Redis keys of one shard. They share one hash tag, so a shard lives in one Cluster slot. */
export interface ShardKeys {
  ready: string;
  delayed: string;
  leases: string;
  owner: string;
  dirty: string;
  fail: string;
  notify: string;
  epoch: string;
  hold: string;
}

export function shardKeys(prefix: string, name: string, shard: number): ShardKeys {
  const base = `${prefix}:{${name}:${shard}}:`;
  return {
    ready: `${base}ready`,
    delayed: `${base}delayed`,
    leases: `${base}leases`,
    owner: `${base}owner`,
    dirty: `${base}dirty`,
    fail: `${base}fail`,
    notify: `${base}notify`,
    epoch: `${base}epoch`,
    hold: `${base}hold`,
  };
}

/** Groups keys by shard, keeping their order inside each shard. */
export function groupByShard(keys: Iterable<string>, shards: number): Map<number, string[]> {
  const groups = new Map<number, string[]>();
  for (const key of keys) {
    const shard = shardOf(key, shards);
    const group = groups.get(shard);
    if (group) group.push(key);
    else groups.set(shard, [key]);
  }
  return groups;
}
