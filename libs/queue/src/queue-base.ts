import { EventEmitter } from 'node:events';
import { ConnectionChanges, createRedisClient, type RedisClient } from './connection.js';
import { JobIds } from './job-ids.js';
import { WorkQueueMetrics } from './metrics.js';
import { resolveQueueOptions, type QueueOptions, type ResolvedQueueOptions } from './options.js';
import { ResetDetector } from './reset-detector.js';
import { shardOf } from './shard.js';
import { ShardQueue, type Seen, type ShardDepth } from './shard-queue.js';

export type QueueEvents = {
  /**
   * Redis lost the data of these shards (restarted empty or failed over without it). Pending keys
   * are gone: the owner of the source of truth (the watcher) must add every key again.
   */
  reset: [shards: number[]];
  /** A Redis command failed; the queue retries, this is for logs. Only emitted when listened to. */
  error: [err: Error];
};

/**
 * Writes were made but not confirmed on every online replica of their primary: a replica lags or
 * went away, or the connection changed (a failover) before the confirmation. Nothing is lost; the
 * caller retries, and the writes of the queue are made so that doing them twice is harmless.
 */
export class NotReplicatedError extends Error {
  constructor(detail: string) {
    super(`Redis did not confirm the writes on its replicas (${detail}); retry them`);
    this.name = 'NotReplicatedError';
  }
}

/** What the producer and the consumer share: options, one Redis client, the shard queues, metrics. */
export abstract class QueueBase<
  Events extends QueueEvents & Record<keyof Events, unknown[]>,
> extends EventEmitter<Events> {
  protected readonly options: ResolvedQueueOptions;
  /**
   * The queue's own connection. What a confirmation covers is the writes made on it, so other
   * writes that must survive a failover with the queue's (the watcher's snapshots) go through it.
   */
  readonly client: RedisClient;
  protected readonly ids = new JobIds();
  /** One BullMQ queue per shard, all on the one client. */
  protected readonly shards: ShardQueue[];
  protected readonly metrics: WorkQueueMetrics | undefined;
  /** Connection changes of the client: a confirmation across one does not count. */
  protected readonly changes: ConnectionChanges;
  private resetDetector: ResetDetector | undefined;

  constructor(options: QueueOptions) {
    super();
    this.options = resolveQueueOptions(options);
    this.client = createRedisClient(this.options.connection);
    this.changes = new ConnectionChanges(this.client);
    this.client.on('error', (err: Error) => this.reportError(err));
    const onError = (err: Error) => this.reportError(err);
    this.shards = Array.from(
      { length: this.options.shards },
      (_, shard) =>
        new ShardQueue(shard, this.client, this.options, this.ids, onError, () => this.seen(shard)),
    );
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
    return shardOf(key, this.options.shards);
  }

  /** The BullMQ queues of all shards, for tools that read them (dashboard, metrics export). */
  get bullQueues(): ShardQueue['queue'][] {
    return this.shards.map((s) => s.queue);
  }

  /** Ready, delayed and running keys per shard. */
  depth(): Promise<ShardDepth[]> {
    return Promise.all(this.shards.map((s) => s.depth()));
  }

  /** BullMQ's own Prometheus text (`bullmq_*`) for every shard queue, labelled by queue. */
  async exportPrometheusMetrics(): Promise<string> {
    const texts = await Promise.all(this.shards.map((s) => s.queue.exportPrometheusMetrics()));
    return mergePrometheusText(texts);
  }

  /** Compares the Redis-loss markers now; resolves after any `reset` event was emitted. */
  checkForReset(): Promise<void> {
    return this.resetDetector?.check() ?? Promise.resolve();
  }

  /** What this client saw of a shard last (epoch, confirmed mark), for checks that compare it. */
  protected seen(shard: number): Seen {
    return this.resetDetector?.seenOf(shard) ?? { epoch: '', mark: 0 };
  }

  /** Records an epoch read from Redis, emitting `reset` if Redis lost the shard. */
  protected observeEpoch(shard: number, epoch: string): void {
    this.resetDetector?.observe(shard, epoch);
  }

  /** Records a mark this client saw confirmed on the replicas. */
  protected confirmMark(shard: number, mark: number): void {
    this.resetDetector?.confirm(shard, mark);
  }

  /**
   * Confirms the writes this client made to `shards` since the connection-change count `since`:
   * resolves once every online replica of their primaries holds them, rejects with
   * NotReplicatedError otherwise (the caller retries). Emits `reset` if the confirmation found
   * that a failover lost writes confirmed earlier.
   */
  protected async confirmWrites(shards: Iterable<number>, since: number): Promise<void> {
    const confirmations = await Promise.all(
      [...new Set(shards)].map(async (shard) => {
        const found = await this.shardQueue(shard).confirmWrites();
        if (found.epoch !== undefined) this.observeEpoch(shard, found.epoch);
        return { shard, ...found };
      }),
    );
    const lagging = confirmations.filter((c) => !c.replicated).map((c) => c.shard);
    if (lagging.length > 0) throw new NotReplicatedError(`shards ${lagging.join(',')}`);
    if (this.changes.current !== since) throw new NotReplicatedError('the connection changed');
    for (const c of confirmations) this.confirmMark(c.shard, c.mark);
  }

  protected shardQueue(shard: number): ShardQueue {
    const queue = this.shards[shard];
    if (!queue) throw new RangeError(`shard ${shard} is outside 0..${this.options.shards - 1}`);
    return queue;
  }

  protected watchForReset(shards: readonly number[]): void {
    this.resetDetector = new ResetDetector(
      this.client,
      async (shard, fresh, seen) => (await this.shardQueue(shard).checkEpoch(fresh, seen)).epoch,
      shards,
      (lost) => (this as EventEmitter<QueueEvents>).emit('reset', lost),
      (err) => this.reportError(err),
    );
    this.resetDetector.start(this.options.resetCheckIntervalMs);
  }

  protected async closeBase(): Promise<void> {
    await this.resetDetector?.stop();
    this.resetDetector = undefined;
    // The queues share the client; closing them must not wait on a Redis that is gone.
    await Promise.all(this.shards.map((s) => s.close().catch(() => undefined)));
    this.client.disconnect();
  }

  protected reportError(err: Error): void {
    const self = this as EventEmitter<QueueEvents>;
    if (self.listenerCount('error') > 0) self.emit('error', err);
  }
}

/**
 * Joins the Prometheus texts of several queues: each metric's HELP and TYPE once, then all its
 * samples (the exposition format wants one block per metric name).
 */
function mergePrometheusText(texts: string[]): string {
  const headers = new Map<string, string[]>();
  const samples = new Map<string, string[]>();
  for (const line of texts.flatMap((t) => t.split('\n'))) {
    if (line.trim() === '') continue;
    const header = /^# (?:HELP|TYPE) (\S+)/.exec(line);
    const name = header?.[1] ?? /^[a-zA-Z_:][\w:]*/.exec(line)?.[0] ?? '';
    if (header) {
      const lines = headers.get(name) ?? [];
      if (!lines.includes(line)) lines.push(line);
      headers.set(name, lines);
    } else {
      // BullMQ writes `{queue="q", state="wait"}`; strict parsers want no space after the comma.
      samples.set(name, [...(samples.get(name) ?? []), line.replaceAll('", ', '",')]);
    }
  }
  const out: string[] = [];
  for (const [name, lines] of samples) out.push(...(headers.get(name) ?? []), ...lines);
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}
