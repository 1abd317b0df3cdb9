import { QueueBase, type QueueEvents } from './queue-base.js';
import type { QueueOptions } from './options.js';
import { groupByShard } from './shard.js';
import type { ShardDepth } from './store.js';

export type Priority = 'normal' | 'low';

export interface AddOptions {
  /**
   * `low` for bulk adds (initial list, periodic resync), so real changes are handed out first, as
   * controller-runtime's priority queue does. A key added at both priorities keeps the higher one.
   */
  priority?: Priority;
}

/** Largest number of keys sent to one shard in one script call (bounds the time Redis is busy). */
const bulkChunk = 500;

/**
 * The producer side (client-go workqueue Add / AddAfter / AddRateLimited / Forget / Len), shared
 * by any number of processes. Emits `reset` when Redis lost the queue.
 */
export class WorkQueue extends QueueBase<QueueEvents> {
  constructor(options: QueueOptions) {
    super(options);
    this.metrics?.addProvider(this.gauges);
    this.watchForReset(Array.from({ length: this.options.shards }, (_, i) => i));
  }

  /** Makes the key due now. Resolves true if it became pending, false if it already was. */
  async add(key: string, options: AddOptions = {}): Promise<boolean> {
    const pending = await this.store.addKeys(
      this.store.shardOf(key),
      [requireKey(key)],
      0,
      options.priority === 'low',
    );
    this.metrics?.incAdds(pending);
    return pending === 1;
  }

  /** Adds many keys, low priority unless told otherwise; resolves how many became pending. */
  async addBulk(
    keys: Iterable<string>,
    options: AddOptions = { priority: 'low' },
  ): Promise<number> {
    const low = options.priority === 'low';
    const calls: Promise<number>[] = [];
    for (const [shard, group] of groupByShard([...keys].map(requireKey), this.options.shards)) {
      for (let i = 0; i < group.length; i += bulkChunk) {
        calls.push(this.store.addKeys(shard, group.slice(i, i + bulkChunk), 0, low));
      }
    }
    const pending = (await Promise.all(calls)).reduce((a, b) => a + b, 0);
    this.metrics?.incAdds(pending);
    return pending;
  }

  /**
   * Makes the key due after `delayMs` unless it is due earlier already (the earliest due time
   * wins). A delay of 0 or less is a plain add.
   */
  async addAfter(key: string, delayMs: number): Promise<void> {
    if (!(delayMs > 0)) {
      await this.add(key);
      return;
    }
    this.metrics?.incRetries();
    await this.store.addKeys(this.store.shardOf(key), [requireKey(key)], delayMs, false);
  }

  /** Adds the key after its per-key exponential backoff and counts one more failure. */
  async addRateLimited(key: string): Promise<void> {
    const failures = await this.store.client.hincrby(
      this.store.keys(this.store.shardOf(key)).fail,
      requireKey(key),
      1,
    );
    const { baseMs, maxMs } = this.options.backoff;
    await this.addAfter(key, Math.min(baseMs * 2 ** (failures - 1), maxMs));
  }

  /** Clears the key's failure count, so its next error backs off from the base again. */
  forget(key: string): Promise<void> {
    return this.store.forget(key);
  }

  /** Consecutive failures of the key (client-go NumRequeues). */
  numRequeues(key: string): Promise<number> {
    return this.store.numRequeues(key);
  }

  /** Keys due now and waiting for a consumer, over all shards (client-go Len). */
  async len(): Promise<number> {
    return (await this.depth()).reduce((total, d) => total + d.ready, 0);
  }

  /** Ready, delayed and running keys per shard. */
  depth(): Promise<ShardDepth[]> {
    return Promise.all(
      Array.from({ length: this.options.shards }, (_, shard) => this.store.depth(shard)),
    );
  }

  async close(): Promise<void> {
    this.metrics?.removeProvider(this.gauges);
    await this.closeBase();
  }

  private readonly gauges = {
    depth: () => this.len(),
    unfinishedWorkSeconds: () => 0,
    longestRunningProcessorSeconds: () => 0,
  };
}

function requireKey(key: string): string {
  if (typeof key !== 'string' || key === '') throw new TypeError('queue key: a non-empty string');
  return key;
}
