import { EventEmitter } from 'node:events';
import { createRedisClient } from './connection.js';
import { WorkQueueMetrics } from './metrics.js';
import { resolveQueueOptions, type QueueOptions, type ResolvedQueueOptions } from './options.js';
import { ResetDetector } from './reset-detector.js';
import { QueueStore } from './store.js';

export type QueueEvents = {
  /**
   * Redis lost the data of these shards (restarted empty or failed over without it). Pending keys
   * are gone: the owner of the source of truth (the watcher) must add every key again.
   */
  reset: [shards: number[]];
  /** A Redis command failed; the queue retries, this is for logs. Only emitted when listened to. */
  error: [err: Error];
};

/** What the producer and the consumer share: options, one Redis client, scripts, metrics. */
export abstract class QueueBase<
  Events extends QueueEvents & Record<keyof Events, unknown[]>,
> extends EventEmitter<Events> {
  protected readonly options: ResolvedQueueOptions;
  protected readonly store: QueueStore;
  protected readonly metrics: WorkQueueMetrics | undefined;
  private resetDetector: ResetDetector | undefined;

  constructor(options: QueueOptions) {
    super();
    this.options = resolveQueueOptions(options);
    const client = createRedisClient(this.options.connection);
    client.on('error', (err: Error) => this.reportError(err));
    this.store = new QueueStore(client, this.options);
    this.metrics = this.options.registry
      ? new WorkQueueMetrics(this.options.registry, this.options.name, this.options.controller)
      : undefined;
  }

  get name(): string {
    return this.options.name;
  }

  get shardCount(): number {
    return this.options.shards;
  }

  /** The shard a key belongs to. */
  shardOf(key: string): number {
    return this.store.shardOf(key);
  }

  /** Compares the Redis-loss markers now; resolves after any `reset` event was emitted. */
  checkForReset(): Promise<void> {
    return this.resetDetector?.check() ?? Promise.resolve();
  }

  /** The epoch of a shard this client saw last, for scripts that check it. */
  protected seenEpoch(shard: number): string {
    return this.resetDetector?.seenEpoch(shard) ?? '';
  }

  /** Records the epoch a script returned, emitting `reset` if Redis lost the shard. */
  protected observeEpoch(shard: number, epoch: string): void {
    this.resetDetector?.observe(shard, epoch);
  }

  protected watchForReset(shards: readonly number[]): void {
    this.resetDetector = new ResetDetector(
      this.store,
      shards,
      (lost) => (this as EventEmitter<QueueEvents>).emit('reset', lost),
      (err) => this.reportError(err),
    );
    this.resetDetector.start(this.options.resetCheckIntervalMs);
  }

  protected async closeBase(): Promise<void> {
    await this.resetDetector?.stop();
    this.resetDetector = undefined;
    this.store.client.disconnect();
  }

  protected reportError(err: Error): void {
    const self = this as EventEmitter<QueueEvents>;
    if (self.listenerCount('error') > 0) self.emit('error', err);
  }
}
