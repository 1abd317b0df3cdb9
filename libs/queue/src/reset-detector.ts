import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { RedisClient } from './connection.js';
import type { Seen } from './shard-queue.js';

/** Reads a shard's epoch, writing `fresh` if it is missing; holds the shard after a loss. */
export type EpochCheck = (shard: number, fresh: string, seen: Seen) => Promise<string>;

/**
 * Notices that Redis lost the queue, in whole or in part:
 *
 * - the epoch marker of a shard vanished or changed since this client last saw it: Redis
 *   restarted empty, failed over to an empty replica, or another client declared the shard lost;
 * - the shard's mark is below the highest one this client saw confirmed on the replicas: a
 *   failover promoted a replica that was not online when writes were confirmed, and lost them.
 *   The client then declares the shard lost, so that every other client notices it too.
 *
 * A failover to a replica that holds every confirmed write changes neither, so it costs nothing:
 * writes that were not confirmed yet are retried by whoever made them. Checks on every (re)connect
 * and Cluster topology change and periodically, so a client that was idle through the outage still
 * finds out; consumers also report what every run's start returns, so a busy one finds out at its
 * next step. Passing what was seen lets the check hold the shard after a loss (ShardQueue).
 */
export class ResetDetector {
  private readonly seen = new Map<number, Seen>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private readonly onChange = (): void => void this.check();

  constructor(
    private readonly client: RedisClient,
    private readonly checkEpoch: EpochCheck,
    private readonly shards: readonly number[],
    private readonly onReset: (shards: number[]) => void,
    private readonly onError: (err: Error) => void,
  ) {}

  start(intervalMs: number): void {
    for (const event of this.events()) this.client.on(event, this.onChange);
    this.timer = setInterval(this.onChange, intervalMs);
    this.timer.unref();
    void this.check();
  }

  async stop(): Promise<void> {
    for (const event of this.events()) this.client.off(event, this.onChange);
    clearInterval(this.timer);
    await this.checking;
  }

  /** What this client saw of a shard; an empty epoch and mark 0 before the first look. */
  seenOf(shard: number): Seen {
    return this.seen.get(shard) ?? { epoch: '', mark: 0 };
  }

  /** Records an epoch read before a run or a write; reports the shard if it changed. */
  observe(shard: number, epoch: string): void {
    if (this.changed(shard, epoch)) this.onReset([shard]);
  }

  /** A mark this client wrote after its writes and saw confirmed on every online replica. */
  confirm(shard: number, mark: number): void {
    const seen = this.seenOf(shard);
    if (mark > seen.mark) this.seen.set(shard, { ...seen, mark });
  }

  /** Resolves once every shard was compared; reports each loss once. */
  check(): Promise<void> {
    this.checking ??= this.compareAll().finally(() => (this.checking = undefined));
    return this.checking;
  }

  /** A single client's `ready` after a reconnect; a Cluster's nodes coming and going. */
  private events(): string[] {
    return this.client instanceof Cluster ? ['ready', '+node', '-node'] : ['ready'];
  }

  /**
   * Records the epoch; true if it replaced another one. A new epoch also forgets the confirmed
   * mark, which belonged to the data that was lost.
   */
  private changed(shard: number, epoch: string): boolean {
    const before = this.seenOf(shard);
    if (before.epoch === epoch) return false;
    const first = before.epoch === '';
    this.seen.set(shard, { epoch, mark: first ? before.mark : 0 });
    return !first;
  }

  private async compareAll(): Promise<void> {
    try {
      const epochs = await Promise.all(
        this.shards.map((shard) => this.checkEpoch(shard, randomUUID(), this.seenOf(shard))),
      );
      const lost = this.shards.filter((shard, i) => this.changed(shard, epochs[i] as string));
      if (lost.length > 0) this.onReset(lost);
    } catch (err) {
      this.onError(err as Error);
    }
  }
}
