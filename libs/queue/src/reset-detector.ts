import { randomUUID } from 'node:crypto';
import type { QueueStore } from './store.js';

/**
 * Notices that Redis lost the queue (restarted empty, failed over to an empty replica): the
 * epoch marker of a shard vanished or changed since this client last saw it. Checks on every
 * (re)connect and periodically, so a client that was idle through the outage still finds out.
 */
export class ResetDetector {
  private readonly seen = new Map<number, string>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private readonly onReady = (): void => void this.check();

  constructor(
    private readonly store: QueueStore,
    private readonly shards: readonly number[],
    private readonly onReset: (shards: number[]) => void,
    private readonly onError: (err: Error) => void,
  ) {}

  start(intervalMs: number): void {
    this.store.client.on('ready', this.onReady);
    this.timer = setInterval(this.onReady, intervalMs);
    this.timer.unref();
    void this.check();
  }

  async stop(): Promise<void> {
    this.store.client.off('ready', this.onReady);
    clearInterval(this.timer);
    await this.checking;
  }

  /** Resolves once every shard was compared; reports each loss once. */
  check(): Promise<void> {
    this.checking ??= this.compareAll().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async compareAll(): Promise<void> {
    try {
      const epochs = await Promise.all(
        this.shards.map((shard) => this.store.checkEpoch(shard, randomUUID())),
      );
      const lost: number[] = [];
      this.shards.forEach((shard, i) => {
        const epoch = epochs[i] as string;
        const before = this.seen.get(shard);
        if (before !== undefined && before !== epoch) lost.push(shard);
        this.seen.set(shard, epoch);
      });
      if (lost.length > 0) this.onReset(lost);
    } catch (err) {
      this.onError(err as Error);
    }
  }
}
