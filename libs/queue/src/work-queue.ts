import { FencedError } from './fence.js';
import { QueueBase, type QueueEvents } from './queue-base.js';
import type { QueueOptions } from './options.js';

export type Priority = 'normal' | 'low';

export interface AddOptions {
  /**
   * `low` for bulk adds (initial list, periodic resync), so real changes are handed out first, as
   * controller-runtime's priority queue does. A key added at both priorities keeps the higher one.
   */
  priority?: Priority;
  /**
   * The adding leader's term: the add is refused with a FencedError when a newer term fenced the
   * key's shard (see fence.ts). Without one the add is unconditional.
   */
  term?: number;
}

/** Adds in flight at once for one addBulk call (bounds the load a resync puts on Redis). */
const bulkParallelism = 64;

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

  /**
   * Makes the key due now. Resolves true if it became pending, false if it already was, once every
   * online replica holds the add (see addBulk).
   */
  async add(key: string, options: AddOptions = {}): Promise<boolean> {
    const since = this.changes.current;
    const pending = await this.addOne(requireKey(key), options);
    await this.confirmWrites([this.shardOf(key)], since);
    return pending;
  }

  /**
   * Adds many keys, low priority unless told otherwise; resolves how many became pending. Resolves
   * only once every online replica of the keys' primaries holds the adds (and whatever this
   * client, or another connection before them, wrote to those primaries earlier, such as the
   * keys' snapshots): a failover after that cannot lose them. Rejects with NotReplicatedError
   * when that cannot be confirmed; adding the keys again is then the right thing to do.
   */
  async addBulk(
    keys: Iterable<string>,
    options: AddOptions = { priority: 'low' },
  ): Promise<number> {
    const all = [...keys].map(requireKey);
    const since = this.changes.current;
    let next = 0;
    let pending = 0;
    const lane = async (): Promise<void> => {
      while (next < all.length) {
        const key = all[next++] as string;
        if (await this.addOne(key, options)) pending++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(bulkParallelism, all.length) }, lane));
    await this.confirmWrites(
      all.map((key) => this.shardOf(key)),
      since,
    );
    return pending;
  }

  /** How often the connection has changed so far: read it before writes that confirm() is to cover. */
  connectionChanges(): number {
    return this.changes.current;
  }

  /**
   * Confirms on every online replica the writes made on the queue's client to the shards of
   * `keys` since `since` (connectionChanges() read before them), as addBulk confirms its own:
   * NotReplicatedError when they are not held there, or the connection changed in between.
   */
  async confirm(keys: Iterable<string>, since: number): Promise<void> {
    await this.confirmWrites(
      [...keys].map((key) => this.shardOf(requireKey(key))),
      since,
    );
  }

  /**
   * Starts a leader's term: raises every shard's fence to `term`, so writes of older terms are
   * refused from now on. Throws FencedError when a newer term already leads.
   */
  async raiseFence(term: number): Promise<void> {
    const fences = await Promise.all(this.shards.map((s) => s.raiseFence(term)));
    const newest = Math.max(...fences);
    if (newest > term) throw new FencedError(term, newest);
  }

  /**
   * Makes the key due after `delayMs` unless it is due earlier already (the earliest due time
   * wins). A key already waiting for a run ignores it. A delay of 0 or less is a plain add.
   */
  async addAfter(key: string, delayMs: number): Promise<void> {
    if (!(delayMs > 0)) {
      await this.add(key);
      return;
    }
    const since = this.changes.current;
    const shard = this.shardQueue(this.shardOf(requireKey(key)));
    this.metrics?.incRetries();
    if (await shard.isWaiting(key)) return;
    await shard.addTimer(key, delayMs);
    await this.confirmWrites([shard.shard], since);
  }

  /** Adds the key after its per-key exponential backoff and counts one more failure. */
  async addRateLimited(key: string): Promise<void> {
    const failures = await this.shardQueue(this.shardOf(requireKey(key))).incFailures(key);
    const { baseMs, maxMs } = this.options.backoff;
    await this.addAfter(key, Math.min(baseMs * 2 ** (failures - 1), maxMs));
  }

  /** Clears the key's failure count, so its next error backs off from the base again. */
  forget(key: string): Promise<void> {
    return this.shardQueue(this.shardOf(key)).forget(key);
  }

  /** Consecutive failures of the key (client-go NumRequeues). */
  numRequeues(key: string): Promise<number> {
    return this.shardQueue(this.shardOf(key)).numRequeues(key);
  }

  /** Keys due now and waiting for a consumer, over all shards (client-go Len). */
  async len(): Promise<number> {
    return (await this.depth()).reduce((total, d) => total + d.ready, 0);
  }

  private async addOne(key: string, options: AddOptions): Promise<boolean> {
    const pending = await this.shardQueue(this.shardOf(key)).add(
      key,
      options.priority === 'low',
      true,
      options.term,
    );
    if (pending) this.metrics?.incAdds(1);
    return pending;
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
