import { queueDefaults, shardLocation, shardOf, type RedisClient } from '#queue';
import {
  decodeMark,
  encodeMark,
  isConverged,
  type ConvergedMark,
  type ConvergedMarks,
} from './converged.js';
import type { SnapshotLocation } from './snapshot.js';

/** The HASH of a shard's marks, key → mark, beside the shard's snapshots (one slot). */
export function convergedMarksKey(prefix: string, name: string, shard: number): string {
  return `${shardLocation(prefix, name, shard).prefix}:converged`;
}

/**
 * Marks in Redis: one HASH per queue shard, so the watcher reads a batch of keys with one HMGET
 * per shard, and a key's mark goes when its snapshot does. The configuration the workers run is
 * one STRING, rewritten with every mark and at every worker's start, so it survives a Redis that
 * lost its data and follows a rollout. Nothing here needs to be durable: a mark lost only costs
 * the key one run, and a stale one never matches the objects the watcher holds now.
 */
export class RedisConvergedMarks implements ConvergedMarks {
  private readonly prefix: string;
  private readonly name: string;
  private readonly shards: number;
  private readonly configKey: string;

  constructor(
    private readonly client: RedisClient,
    location: SnapshotLocation,
  ) {
    this.prefix = location.prefix ?? queueDefaults.prefix;
    this.name = location.name;
    this.shards = location.shards ?? queueDefaults.shards;
    this.configKey = `${this.prefix}:${this.name}:reconciler-config`;
  }

  async record(key: string, mark: ConvergedMark): Promise<void> {
    await Promise.all([
      this.client.hset(this.marksKey(key), key, encodeMark(mark)),
      this.client.set(this.configKey, mark.config),
    ]);
  }

  async publishConfig(config: string): Promise<void> {
    await this.client.set(this.configKey, config);
  }

  async converged(
    entries: readonly (readonly [key: string, fingerprint: string])[],
    now: number,
  ): Promise<Set<string>> {
    const byShard = new Map<string, (readonly [string, string])[]>();
    for (const entry of entries) {
      const hash = this.marksKey(entry[0]);
      const group = byShard.get(hash);
      if (group) group.push(entry);
      else byShard.set(hash, [entry]);
    }
    const [config, ...replies] = await Promise.all([
      this.client.get(this.configKey),
      ...[...byShard].map(([hash, group]) => this.client.hmget(hash, ...group.map(([key]) => key))),
    ]);
    const converged = new Set<string>();
    if (config === null) return converged;
    [...byShard.values()].forEach((group, i) => {
      const marks = replies[i] as (string | null)[];
      group.forEach(([key, fingerprint], j) => {
        const text = marks[j];
        const mark = text ? decodeMark(text) : undefined;
        if (isConverged(mark, fingerprint, config, now)) converged.add(key);
      });
    });
    return converged;
  }

  private marksKey(key: string): string {
    return convergedMarksKey(this.prefix, this.name, shardOf(key, this.shards));
  }
}
