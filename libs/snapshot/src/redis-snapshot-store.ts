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
 * write can be checked against the leader's term in one script. A snapshot deleted takes its key's
 * converged mark along.
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
    const fences = (
      await Promise.all(entries.map(([key, snapshot]) => this.writeOne(key, snapshot, term)))
    ).filter((fence) => fence > 0);
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

  /**
   * Writes one key's snapshot; resolves 0, or the term that fenced it. Plain commands, not a
   * pipeline: the connection sends a whole batch's in one write (cork-each-turn.ts in #queue), a
   * Cluster client sends each to its shard's node, and building a pipeline would first copy every
   * script the client knows, BullMQ's included.
   */
  private async writeOne(
    key: string,
    snapshot: WorldSnapshot | undefined,
    term: number | undefined,
  ): Promise<number> {
    const shard = this.shardOf(key);
    const marks = convergedMarksKey(this.prefix, this.name, shard);
    if (term !== undefined) {
      const json = snapshot ? JSON.stringify(snapshot) : '';
      const fence = shardKeys(this.prefix, this.name, shard).fence;
      return Number(
        await writeSnapshot.run(this.client, fence, this.redisKey(key), marks, term, json, key),
      );
    }
    if (snapshot) await this.client.set(this.redisKey(key), JSON.stringify(snapshot));
    else await Promise.all([this.client.del(this.redisKey(key)), this.client.hdel(marks, key)]);
    return 0;
  }

  private shardOf(key: string): number {
    return shardOf(key, this.shards);
  }

  private shardPrefix(shard: number): string {
    return shardLocation(this.prefix, this.name, shard).prefix;
  }
}
