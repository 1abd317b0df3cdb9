import { setTimeout as sleep } from 'node:timers/promises';
import { duplicateClient, type RedisClient } from './connection.js';
import type { QueueOptions } from './options.js';
import { QueueBase, type QueueEvents } from './queue-base.js';
import { isTerminalError, LeaseLostError, ShutdownError, type Result } from './result.js';
import { Slots } from './slots.js';
import type { FinishAndTakeResult, FinishRequest, Outcome, TakenKey } from './store.js';

export interface RunContext {
  /** Fires when the run should stop: its lease was lost or the consumer shuts down. */
  signal: AbortSignal;
  /** Consecutive failures of this key before this run. */
  failures: number;
  shard: number;
}

export type Handler = (key: string, ctx: RunContext) => Promise<Result> | Result;

export interface StartOptions {
  /** Shards to serve; all of them by default. Any consumer may serve any subset at any time. */
  shards?: readonly number[];
  /** Runs at once in this process, over all its shards (MaxConcurrentReconciles). */
  concurrency: number;
  handler: Handler;
}

export interface ShutdownOptions {
  /** How long in-flight runs may finish before they are aborted (default: the lock duration). */
  drainTimeoutMs?: number;
}

export type ConsumerEvents = QueueEvents & {
  /** A run's key was taken over by another consumer (its lease expired); its result is dropped. */
  leaseLost: [key: string];
  /** A handler failed; `terminal` errors are not retried. */
  runFailed: [key: string, err: unknown, terminal: boolean];
};

interface Run {
  key: string;
  token: string;
  shard: number;
  startedAt: number;
  renewedAt: number;
  abort: AbortController;
}

/** Resolves true if the promise settled within `ms`, false if the time ran out first. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = promise.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, sleep(Math.max(0, ms), false, { ref: false })]);
}

/** Redis rounds blocking timeouts to its `hz` tick (100 ms by default): shorter waits use a timer. */
const shortestBlockMs = 100;
const retryDelayMs = 200;

/**
 * The consumer side: takes keys from its shards and runs the handler, at most once per key at a
 * time across all consumers, mapping the Result to the next step of the key.
 */
export class QueueConsumer extends QueueBase<ConsumerEvents> {
  private readonly runs = new Map<string, Run>();
  private readonly chains = new Set<Promise<void>>();
  private readonly lanes: Promise<void>[] = [];
  private readonly blockingClients: RedisClient[] = [];
  private slots = new Slots(1);
  private handler: Handler = () => undefined;
  private stopping = false;
  private started = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly maxIdleMs: number;

  constructor(options: QueueOptions) {
    super(options);
    this.maxIdleMs = Math.min(5_000, this.options.lockDurationMs);
  }

  start(options: StartOptions): void {
    if (this.started) throw new Error('queue consumer already started');
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new Error(`consumer option concurrency: an integer >= 1 (got ${options.concurrency})`);
    }
    const shards = options.shards ?? Array.from({ length: this.options.shards }, (_, i) => i);
    for (const shard of shards) this.store.keys(shard);
    this.started = true;
    this.handler = options.handler;
    this.slots = new Slots(options.concurrency);
    this.metrics?.addProvider(this.gauges);
    this.watchForReset(shards);
    this.heartbeat = setInterval(() => void this.renewLeases(), this.options.lockDurationMs / 3);
    const batch = Math.max(1, Math.ceil(options.concurrency / shards.length));
    for (const shard of shards) this.lanes.push(this.serveShard(shard, batch));
  }

  /** Keys running in this process now. */
  get running(): string[] {
    return [...this.runs.values()].map((r) => r.key);
  }

  /**
   * Stops taking keys and lets in-flight runs finish. Runs still going after the drain timeout are
   * aborted; those that end then hand their key back (it is due at once elsewhere), and those that
   * ignore the signal are left to their lease, which expires and lets another consumer run them.
   */
  async shutdown(options: ShutdownOptions = {}): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.slots.close();
    for (const client of this.blockingClients) client.disconnect();
    const drainMs = options.drainTimeoutMs ?? this.options.lockDurationMs;
    const deadline = Date.now() + drainMs;
    // Lanes end at once (a take in flight finishes first); keys it took start runs to wait for.
    await within(Promise.all(this.lanes), drainMs);
    const drained = () => Promise.all(this.chains);
    if (!(await within(drained(), deadline - Date.now()))) {
      for (const run of this.runs.values()) run.abort.abort(new ShutdownError());
      await within(drained(), 1_000);
    }
    clearInterval(this.heartbeat);
    this.metrics?.removeProvider(this.gauges);
    await this.closeBase();
  }

  private async serveShard(shard: number, batch: number): Promise<void> {
    const blocking = duplicateClient(this.store.client);
    blocking.on('error', () => undefined);
    this.blockingClients.push(blocking);
    const notify = this.store.keys(shard).notify;
    while (!this.stopping) {
      const slots = await this.slots.acquire(batch);
      if (slots === 0) break;
      if (this.stopping) {
        this.slots.release(slots);
        break;
      }
      const step = await this.step(shard, undefined, slots);
      this.slots.release(slots - (step?.taken.length ?? 0));
      if (!step) await sleep(retryDelayMs);
      else if (step.taken.length > 0) {
        for (const taken of step.taken) this.track(this.runChain(shard, taken));
      } else await this.idle(blocking, notify, step.sleepMs);
    }
    blocking.disconnect();
  }

  private async idle(blocking: RedisClient, notify: string, sleepMs: number): Promise<void> {
    const waitMs = Math.min(sleepMs, this.maxIdleMs);
    if (waitMs < shortestBlockMs) {
      await sleep(Math.max(1, waitMs));
      return;
    }
    try {
      await blocking.blpop(notify, waitMs / 1000);
    } catch (err) {
      if (!this.stopping) {
        this.reportError(err as Error);
        await sleep(retryDelayMs);
      }
    }
  }

  private track(chain: Promise<void>): void {
    this.chains.add(chain);
    void chain.finally(() => this.chains.delete(chain));
  }

  /** Runs a key, then keeps its slot for the shard's next key while nobody else waits for one. */
  private async runChain(shard: number, first: TakenKey): Promise<void> {
    let next: TakenKey | undefined = first;
    while (next) {
      const finish = await this.run(shard, next);
      const take = this.stopping || this.slots.hasWaiters ? 0 : 1;
      next = await this.finish(shard, finish, take);
    }
    this.slots.release();
  }

  private async run(shard: number, taken: TakenKey): Promise<FinishRequest> {
    const startedAt = Date.now();
    const run: Run = {
      key: taken.key,
      token: taken.token,
      shard,
      startedAt,
      renewedAt: startedAt,
      abort: new AbortController(),
    };
    this.runs.set(taken.token, run);
    let outcome: Outcome;
    let requeueAfterMs: number | undefined;
    try {
      const result = await this.handler(taken.key, {
        signal: run.abort.signal,
        failures: taken.failures,
        shard,
      });
      requeueAfterMs = result?.requeueAfter;
      outcome = requeueAfterMs !== undefined && requeueAfterMs > 0 ? 'after' : 'ok';
    } catch (err) {
      const terminal = isTerminalError(err);
      outcome = terminal ? 'terminal' : 'error';
      if (run.abort.signal.reason instanceof ShutdownError) outcome = 'release';
      if (this.listenerCount('runFailed') > 0) this.emit('runFailed', taken.key, err, terminal);
    } finally {
      this.runs.delete(taken.token);
    }
    this.metrics?.observeWorkDuration((Date.now() - startedAt) / 1000);
    if (outcome === 'after' || outcome === 'error') this.metrics?.incRetries();
    return { key: taken.key, token: taken.token, outcome, requeueAfterMs };
  }

  /**
   * Reports the outcome, retrying while Redis is unreachable. After a lock duration of failures
   * the lease has expired anyway and another consumer owns the key, so the outcome is dropped.
   */
  private async finish(
    shard: number,
    finish: FinishRequest,
    take: number,
  ): Promise<TakenKey | undefined> {
    const giveUpAt = Date.now() + this.options.lockDurationMs;
    for (let attempt = 0; ; attempt++) {
      const step = await this.step(shard, finish, attempt === 0 ? take : 0);
      if (step) {
        if (step.finished === -1) this.emit('leaseLost', finish.key);
        return step.taken[0];
      }
      if (Date.now() > giveUpAt) return undefined;
      await sleep(retryDelayMs);
    }
  }

  /** One finishAndTake call; undefined when Redis failed (reported, and the caller retries). */
  private async step(
    shard: number,
    finish: FinishRequest | undefined,
    take: number,
  ): Promise<FinishAndTakeResult | undefined> {
    try {
      const step = await this.store.finishAndTake(
        shard,
        finish,
        take,
        this.maxIdleMs,
        this.seenEpoch(shard),
      );
      this.observeEpoch(shard, step.epoch);
      this.metrics?.incAdds(step.promoted);
      for (const taken of step.taken) {
        this.metrics?.observeQueueDuration((step.now - taken.enqueuedAt) / 1000);
      }
      return step;
    } catch (err) {
      this.reportError(err as Error);
      return undefined;
    }
  }

  /**
   * Heartbeat. A run whose lease could not be renewed for a whole lock duration is aborted: by
   * then another consumer may run the key, and the handler should stop writing.
   */
  private async renewLeases(): Promise<void> {
    const byShard = new Map<number, Run[]>();
    for (const run of this.runs.values()) {
      const runs = byShard.get(run.shard) ?? [];
      runs.push(run);
      byShard.set(run.shard, runs);
    }
    await Promise.all(
      [...byShard].map(async ([shard, runs]) => {
        const now = Date.now();
        try {
          const kept = await this.store.extendLeases(shard, runs);
          runs.forEach((run, i) => (kept[i] ? (run.renewedAt = now) : this.loseLease(run)));
        } catch (err) {
          this.reportError(err as Error);
          for (const run of runs) {
            if (Date.now() - run.renewedAt >= this.options.lockDurationMs) this.loseLease(run);
          }
        }
      }),
    );
  }

  private loseLease(run: Run): void {
    if (run.abort.signal.aborted) return;
    run.abort.abort(new LeaseLostError(run.key));
    this.emit('leaseLost', run.key);
  }

  private readonly gauges = {
    depth: async () => {
      const shards = Array.from({ length: this.options.shards }, (_, s) => this.store.depth(s));
      return (await Promise.all(shards)).reduce((total, d) => total + d.ready, 0);
    },
    unfinishedWorkSeconds: () => {
      const now = Date.now();
      return [...this.runs.values()].reduce((total, r) => total + (now - r.startedAt) / 1000, 0);
    },
    longestRunningProcessorSeconds: () => {
      const now = Date.now();
      return Math.max(0, ...[...this.runs.values()].map((r) => (now - r.startedAt) / 1000));
    },
  };
}
