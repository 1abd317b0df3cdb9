import { Cluster } from 'ioredis';
import { convergedMarksKey } from './redis-converged-marks.js';
import type { SnapshotLocation, SnapshotReader, SnapshotStore, WorldSnapshot } from './snapshot.js';
import {
  FencedError,
  LuaScript,
  queueDefaults,
  shardKeys,
  shardLocation,
  shardOf,
  type RedisClient,
} from '#queue';

const SCAN_COUNT = 1000;

const writeSnapshot = new LuaScript(
  'writeSnapshot',
  3,
  new URL('./commands/writeSnapshot-3.lua', import.meta.url),
);

type Entry = readonly [key: string, snapshot: WorldSnapshot | undefined];

/**
 * Snapshots in Redis: one string per BackupJob key holding the whole snapshot as JSON, so a
 * worker reads one with a single GET and a write replaces it, never mixing two moments. Each
 * snapshot lives in its key's queue shard (the shard's hash tag), beside the shard's fence, so a
 * write can be checked against the leader's term in one script, and on a Redis Cluster a batch
 * goes out as one pipeline per shard. A snapshot deleted takes its key's converged mark along.
 */
export class RedisSnapshotStore implements SnapshotStore, SnapshotReader {
  private readonly prefix: string;
  private readonly name: string;
  private readonly shards: number;

  constructor(
    readonly client: RedisClient,
    location: SnapshotLocation,
  ) {
    this.prefix = location.prefix ?? queueDefaults.prefix;
    this.name = location.name;
    this.shards = location.shards ?? queueDefaults.shards;
    writeSnapshot.on(client);
  }

  /** The Redis key of a BackupJob key's snapshot. */
  redisKey(key: string): string {
    return `${this.shardPrefix(this.shardOf(key))}:snapshot:${key}`;
  }

  /**
   * Replaces each key's snapshot (`undefined` deletes it). With a leader `term`, every write is
   * checked against its shard's fence; if a newer term fenced any, the others are still written
   * and a FencedError says how many were refused.
   */
  async write(entries: readonly Entry[], term?: number): Promise<void> {
    const byShard = new Map<number, Entry[]>();
    for (const entry of entries) {
      const shard = this.shardOf(entry[0]);
      const group = byShard.get(shard);
      if (group) group.push(entry);
      else byShard.set(shard, [entry]);
    }
    // Without a Cluster one pipeline for the batch; with one, a pipeline per shard (one slot each).
    const groups = this.client instanceof Cluster ? [...byShard.values()] : [entries];
    const replies = await Promise.all(groups.map((group) => this.writeGroup(group, term)));
    const fences = replies.flat().filter((fence) => fence > 0);
    if (term !== undefined && fences.length > 0) {
      throw new FencedError(term, Math.max(...fences), fences.length);
    }
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
    // `{` and `}` are plain characters to MATCH; the `*` between them matches any shard.
    const match = `${this.prefix}:{${this.name}:*}:snapshot:*`;
    for (const node of nodes) {
      const stream = node.scanStream({ match, count: SCAN_COUNT });
      for await (const batch of stream as AsyncIterable<string[]>) {
        for (const redisKey of batch) {
          yield redisKey.slice(redisKey.indexOf(':snapshot:') + ':snapshot:'.length);
        }
      }
    }
  }

  /** Writes one group in one pipeline; per entry 0 (written) or the term that fenced it. */
  private async writeGroup(group: readonly Entry[], term: number | undefined): Promise<number[]> {
    const pipeline = this.client.pipeline();
    const fenced = writeSnapshot.commandOf(pipeline);
    for (const [key, snapshot] of group) {
      const shard = this.shardOf(key);
      if (term !== undefined) {
        const json = snapshot ? JSON.stringify(snapshot) : '';
        void fenced.call(
          pipeline,
          shardKeys(this.prefix, this.name, shard).fence,
          this.redisKey(key),
          convergedMarksKey(this.prefix, this.name, shard),
          term,
          json,
          key,
        );
      } else if (snapshot) pipeline.set(this.redisKey(key), JSON.stringify(snapshot));
      else
        pipeline
          .del(this.redisKey(key))
          .hdel(convergedMarksKey(this.prefix, this.name, shard), key);
    }
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([err, reply]) => {
      if (err) throw err;
      return term === undefined ? 0 : Number(reply);
    });
  }

  private shardOf(key: string): number {
    return shardOf(key, this.shards);
  }

  private shardPrefix(shard: number): string {
    return shardLocation(this.prefix, this.name, shard).prefix;
  }
}
