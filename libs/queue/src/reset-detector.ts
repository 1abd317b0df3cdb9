import { randomUUID } from 'node:crypto';
import type { RedisClient } from './connection.js';

/** Reads a shard's epoch, writing `fresh` if it is missing; holds the shard if it differs from `seen`. */
export type EpochCheck = (shard: number, fresh: string, seen: string) => Promise<string>;

/**
 * Notices that Redis lost the queue (restarted empty, failed over to an empty replica): the
 * epoch marker of a shard vanished or changed since this client last saw it. Checks on every
 * (re)connect and periodically, so a client that was idle through the outage still finds out;
 * consumers also report the epoch every step returns, so a busy one finds out at its next step.
 * Passing the last seen epoch lets the check hold the shard after a loss (ShardQueue.checkEpoch).
 */
export class ResetDetector {
  private readonly seen = new Map<number, string>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private readonly onReady = (): void => void this.check();

  constructor(
    private readonly client: RedisClient,
    private readonly checkEpoch: EpochCheck,
    private readonly shards: readonly number[],
    private readonly onReset: (shards: number[]) => void,
    private readonly onError: (err: Error) => void,
  ) {}

  start(intervalMs: number): void {
    this.client.on('ready', this.onReady);
    this.timer = setInterval(this.onReady, intervalMs);
    this.timer.unref();
    void this.check();
  }

  async stop(): Promise<void> {
    this.client.off('ready', this.onReady);
    clearInterval(this.timer);
    await this.checking;
  }

  /** The epoch of a shard when this client last looked; '' before the first look. */
  seenEpoch(shard: number): string {
    return this.seen.get(shard) ?? '';
  }

  /** Records an epoch a consumer read before a run; reports the shard if it changed. */
  observe(shard: number, epoch: string): void {
    if (this.changed(shard, epoch)) this.onReset([shard]);
  }

  /** Resolves once every shard was compared; reports each loss once. */
  check(): Promise<void> {
    this.checking ??= this.compareAll().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private changed(shard: number, epoch: string): boolean {
    const before = this.seen.get(shard);
    this.seen.set(shard, epoch);
    return before !== undefined && before !== epoch;
  }

  private async compareAll(): Promise<void> {
    try {
      const epochs = await Promise.all(
        this.shards.map((shard) => this.checkEpoch(shard, randomUUID(), this.seenEpoch(shard))),
      );
      const lost = this.shards.filter((shard, i) => this.changed(shard, epochs[i] as string));
      if (lost.length > 0) this.onReset(lost);
    } catch (err) {
      this.onError(err as Error);
    }
  }
}
