import { Cluster, type Redis } from 'ioredis';
import type { SnapshotReader, SnapshotStore, WorldSnapshot } from '#kube';

const SCAN_COUNT = 1000;

/**
 * Snapshots in Redis: one string per BackupJob key holding the whole snapshot as JSON, so a
 * worker reads one with a single GET and a write replaces it with a single SET, never mixing
 * two moments. One key per BackupJob and no multi-key command, so it works on Redis Cluster.
 */
export class RedisSnapshotStore implements SnapshotStore, SnapshotReader {
  private readonly prefix: string;

  /** `prefix`: the queue's name, so two operators can share a Redis. */
  constructor(
    readonly client: Redis | Cluster,
    prefix: string,
  ) {
    this.prefix = `${prefix}:snapshot:`;
  }

  /** The Redis key of a BackupJob key's snapshot. */
  redisKey(key: string): string {
    return this.prefix + key;
  }

  async write(
    entries: readonly (readonly [key: string, snapshot: WorldSnapshot | undefined])[],
  ): Promise<void> {
    // One round trip for the batch; a Cluster pipeline may only hold keys of one slot.
    const client = this.client;
    if (client instanceof Cluster) {
      await Promise.all(
        entries.map(([key, snapshot]) =>
          snapshot
            ? client.set(this.redisKey(key), encode(snapshot))
            : client.del(this.redisKey(key)),
        ),
      );
      return;
    }
    const pipeline = client.pipeline();
    for (const [key, snapshot] of entries) {
      if (snapshot) pipeline.set(this.redisKey(key), encode(snapshot));
      else pipeline.del(this.redisKey(key));
    }
    for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
  }

  async read(key: string): Promise<WorldSnapshot | undefined> {
    const text = await this.client.get(this.redisKey(key));
    if (text === null) return undefined;
    try {
      return JSON.parse(text) as WorldSnapshot;
    } catch {
      throw new Error(`snapshot of ${key} in Redis is not JSON`);
    }
  }

  async *keys(): AsyncIterable<string> {
    const nodes = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    for (const node of nodes) {
      const stream = node.scanStream({ match: `${this.prefix}*`, count: SCAN_COUNT });
      for await (const batch of stream as AsyncIterable<string[]>) {
        for (const redisKey of batch) yield redisKey.slice(this.prefix.length);
      }
    }
  }
}

function encode(snapshot: WorldSnapshot): string {
  return JSON.stringify(snapshot);
}
