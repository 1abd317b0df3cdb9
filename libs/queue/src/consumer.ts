import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRedisBackend, Job, Worker, type JobJson } from 'bullmq';
import { duplicateClient, type RedisClient } from './connection.js';
import { nameAsWorker, workerClientName } from './worker-name.js';
import { parseJobId } from './job-ids.js';
import type { QueueOptions } from './options.js';
import { NotReplicatedError, QueueBase, type QueueEvents } from './queue-base.js';
import { isTerminalError, LeaseLostError, ShutdownError, type HandlerResult } from './result.js';
import { shardLocation } from './shard.js';
import type { RunStart, ShardQueue } from './shard-queue.js';
import { Slots } from './slots.js';

export interface RunContext {
  /** Fires when the run should stop: its lease was lost or the consumer shuts down. */
  signal: AbortSignal;
  /** Consecutive failures of this key before this run. */
  failures: number;
  shard: number;
}

export type Handler = (key: string, ctx: RunContext) => Promise<HandlerResult> | HandlerResult;

export interface StartOptions {
  /** Shards to serve; all of them by default. Any consumer may serve any subset at any time. */
  shards?: readonly number[];
  /** Runs at once in this process, over all its shards (MaxConcurrentReconciles). */
  concurrency: number;
  handler: Handler;
  /**
   * How this consumer is named to Redis (CLIENT SETNAME, as BullMQ names a worker), so that
   * BullMQ's getWorkers and the queue dashboard list it under every shard it serves. Default:
   * the host name and process id.
   */
  name?: string;
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

type Outcome = 'ok' | 'after' | 'error' | 'terminal' | 'release';

interface Run {
  key: string;
  job: Job;
  token: string;
  shard: number;
  /** Connection changes before the key was claimed: the claim's confirmation must see no other. */
  since: number;
  startedAt: number;
  renewedAt: number;
  abort: AbortController;
  /** Consecutive failures of the key before this run. */
  failures: number;
  /** The key's failed job from an earlier run, if one is kept. */
  failedJob: string | undefined;
  /** The handler returned and the outcome is being written. */
  finishing: boolean;
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
/** Stalls never fail a key: past BullMQ's maxStalledCount a job is failed and the key forgotten. */
const neverFailStalled = 1e9;
/** BullMQ's errors for a job whose lock is gone: its run was handed to another consumer. */
const lockLost = /lock|Missing key/i;

/**
 * The consumer side: takes keys from its shards' BullMQ queues and runs the handler, at most once
 * per key at a time across all consumers, mapping the HandlerResult to the key's next step.
 *
 * One BullMQ Worker per shard, fetched by hand (`getNextJob`), so that one slot pool is the
 * process's concurrency over all its shards; the Worker brings BullMQ's stalled-job recovery.
 */
export class QueueConsumer extends QueueBase<ConsumerEvents> {
  private readonly runs = new Map<string, Run>();
  private readonly chains = new Set<Promise<void>>();
  private readonly lanes: Promise<void>[] = [];
  private readonly workers = new Map<number, Worker>();
  private readonly blockingClients: RedisClient[] = [];
  private readonly tokenPrefix = `${randomUUID()}:`;
  private tokenSeq = 0;
  private slots = new Slots(1);
  private handler: Handler = () => undefined;
  private consumerName = `${hostname()}-${process.pid}`;
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
    for (const shard of shards) this.shardQueue(shard);
    this.started = true;
    this.handler = options.handler;
    if (options.name) this.consumerName = options.name.replace(/\s+/g, '-');
    this.slots = new Slots(options.concurrency);
    this.metrics?.addProvider(this.gauges);
    this.watchForReset(shards);
    this.heartbeat = setInterval(() => void this.renewLocks(), this.options.lockDurationMs / 3);
    for (const shard of shards) {
      const worker = this.createWorker(shard);
      this.workers.set(shard, worker);
      this.lanes.push(this.serveShard(shard, worker));
    }
  }

  /** Keys running in this process now. */
  get running(): string[] {
    return [...this.runs.values()].map((r) => r.key);
  }

  /**
   * Stops taking keys and lets in-flight runs finish. Runs still going after the drain timeout are
   * aborted; those that end then hand their key back (it is due at once elsewhere), and those that
   * ignore the signal are left to their lock, which expires and lets another consumer run them.
   */
  async shutdown(options: ShutdownOptions = {}): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.slots.close();
    for (const client of this.blockingClients) client.disconnect();
    const drainMs = options.drainTimeoutMs ?? this.options.lockDurationMs;
    const deadline = Date.now() + drainMs;
    // Lanes end at once (a fetch in flight finishes first); a key it took starts a run to wait for.
    await within(Promise.all(this.lanes), drainMs);
    const drained = () => Promise.all(this.chains);
    if (!(await within(drained(), deadline - Date.now()))) {
      for (const run of this.runs.values()) run.abort.abort(new ShutdownError());
      await within(drained(), 1_000);
    }
    clearInterval(this.heartbeat);
    this.metrics?.removeProvider(this.gauges);
    await Promise.all([...this.workers.values()].map((w) => within(w.close(true), 1_000)));
    await this.closeBase();
  }

  private createWorker(shard: number): Worker {
    const location = shardLocation(this.options.prefix, this.options.name, shard);
    // No blocking connection of BullMQ's own: the lanes wait on the shard's marker themselves,
    // without holding a slot of the shared budget while they wait.
    const worker = new Worker(
      location.queueName,
      null,
      {
        connection: this.client,
        prefix: location.prefix,
        autorun: false,
        lockDuration: this.options.lockDurationMs,
        stalledInterval: Math.max(50, Math.floor(this.options.lockDurationMs / 2)),
        maxStalledCount: neverFailStalled,
        // Keeps BullMQ's completed and failed counts (bullmq_job_*_total) and an hour of history.
        metrics: { maxDataPoints: 60 },
      },
      (name, opts) => createRedisBackend(name, opts, { withBlockingConnection: false }),
    );
    worker.on('error', (err) => this.reportError(err));
    void worker.startStalledCheckTimer();
    return worker;
  }

  private async serveShard(shard: number, worker: Worker): Promise<void> {
    const blocking = duplicateClient(this.client);
    blocking.on('error', () => undefined);
    nameAsWorker(blocking, workerClientName(worker, this.consumerName));
    this.blockingClients.push(blocking);
    const queue = this.shardQueue(shard);
    while (!this.stopping) {
      if (!(await this.slots.acquire(shard))) break;
      if (this.stopping) {
        this.slots.release(shard);
        break;
      }
      const token = `${this.tokenPrefix}${this.tokenSeq++}`;
      const since = this.changes.current;
      const job = await worker.getNextJob(token, { block: false }).catch((err: Error) => {
        this.reportError(err);
        return null;
      });
      if (job) {
        this.track(this.handle(queue, job, token, since).finally(() => this.slots.release(shard)));
        continue;
      }
      this.slots.release(shard);
      if (job === null) await sleep(retryDelayMs);
      else await this.idle(blocking, queue.keys.marker);
    }
    blocking.disconnect();
  }

  /**
   * Waits for BullMQ's marker: an add (score 0) or the due time of the earliest delayed job.
   * Returns when something may be due, or after the longest idle wait.
   */
  private async idle(blocking: RedisClient, marker: string): Promise<void> {
    let until = Date.now() + this.maxIdleMs;
    while (!this.stopping) {
      const waitMs = until - Date.now();
      if (waitMs <= 0) return;
      if (waitMs < shortestBlockMs) {
        await sleep(waitMs);
        return;
      }
      let popped: [string, string, string] | null;
      try {
        popped = (await blocking.bzpopmin(marker, waitMs / 1000)) as typeof popped;
      } catch (err) {
        if (!this.stopping) {
          this.reportError(err as Error);
          await sleep(retryDelayMs);
        }
        return;
      }
      const due = popped ? Number(popped[2]) : 0;
      if (!popped || due <= Date.now()) return;
      until = Math.min(until, due);
    }
  }

  private track(chain: Promise<void>): void {
    this.chains.add(chain);
    void chain.finally(() => this.chains.delete(chain));
  }

  /**
   * Handles the job, then, while the slot stays with the shard (Slots.keeps), the shard's next
   * job, which BullMQ hands out in the same call that finishes the previous one.
   */
  private async handle(queue: ShardQueue, job: Job, token: string, since: number): Promise<void> {
    let next: Job | undefined = job;
    while (next) {
      // The next job is claimed by this job's finish; a change from here on may undo that claim.
      const nextSince = this.changes.current;
      const parsed = parseJobId(String(next.id));
      let raw: unknown;
      if (parsed?.kind === 'timer') raw = await this.fire(queue, parsed.key, next, token);
      else if (parsed) raw = await this.run(queue, parsed.key, next, token, since);
      else
        raw = await next
          .moveToCompleted(undefined, token, this.fetchNext(queue.shard))
          .catch(() => undefined);
      next = this.nextJob(queue.shard, raw, token);
      since = nextSince;
    }
  }

  /** Whether finishing a job of `shard` should also take the shard's next one (see Slots). */
  private fetchNext(shard: number): boolean {
    return !this.stopping && this.slots.keeps(shard);
  }

  /** The job BullMQ returned with a finish (`[data, id, …]`), owned by the same token. */
  private nextJob(shard: number, raw: unknown, token: string): Job | undefined {
    const [data, id] = Array.isArray(raw) ? (raw as [JobJson | undefined, string | undefined]) : [];
    const worker = this.workers.get(shard);
    if (!data || !id || !worker) return undefined;
    const job = Job.fromJSON(worker, data, id);
    job.token = token;
    return job;
  }

  /**
   * A timer fell due: the key becomes due now. If that fails, the timer job keeps its (unrenewed)
   * lock and BullMQ's stalled check hands it out again, so the timer is not lost.
   */
  private async fire(queue: ShardQueue, key: string, job: Job, token: string): Promise<unknown> {
    try {
      if (await queue.add(key, false, false)) this.metrics?.incAdds(1);
      return await job.moveToCompleted(undefined, token, this.fetchNext(queue.shard));
    } catch (err) {
      this.reportError(err as Error);
      return undefined;
    }
  }

  /** Runs the key; resolves what the finish returned (the next job, if BullMQ handed one out). */
  private async run(
    queue: ShardQueue,
    key: string,
    job: Job,
    token: string,
    since: number,
  ): Promise<unknown> {
    const now = Date.now();
    const run: Run = {
      key,
      job,
      token,
      shard: queue.shard,
      since,
      startedAt: now,
      renewedAt: now,
      abort: new AbortController(),
      failures: 0,
      failedJob: undefined,
      finishing: false,
    };
    this.runs.set(token, run);
    try {
      const start = await this.beforeRun(queue, run);
      if (start === undefined) return undefined;
      run.failures = start.failures;
      run.failedJob = start.failedJob;
      const failures = start.failures;
      this.metrics?.observeQueueDuration((Date.now() - job.timestamp) / 1000);
      const { outcome, err, requeueAfterMs } = await this.callHandler(run, failures);
      run.finishing = true;
      return await this.finish(queue, run, outcome, err, requeueAfterMs);
    } finally {
      this.runs.delete(token);
    }
  }

  /**
   * Checks that Redis did not lose the shard, that every online replica holds this consumer's
   * claim of the key, and reads the key's failure count. An unconfirmed claim could be undone by
   * a failover and the key handed to another consumer while this one runs it, so the key is not
   * run. After a loss, runs from before it may still be going without a lock: the run waits out
   * the shard's hold. Undefined: do not run (Redis failed, the claim is unconfirmed, or the lock
   * was lost meanwhile); the job's lock then expires and BullMQ hands it out again.
   */
  private async beforeRun(queue: ShardQueue, run: Run): Promise<RunStart | undefined> {
    try {
      const start = await queue.runStart(run.key, randomUUID(), this.seen(queue.shard));
      this.observeEpoch(queue.shard, start.epoch);
      if (!start.replicated) throw new NotReplicatedError(`the claim of ${run.key}`);
      if (this.changes.current !== run.since) {
        throw new NotReplicatedError(`the connection changed after the claim of ${run.key}`);
      }
      this.confirmMark(queue.shard, start.mark);
      // PTTL and timers count whole milliseconds, so a timer can end just short of the hold: the
      // run starts once Redis itself has dropped it.
      for (let left = start.holdMs; left > 0; left = await queue.holdLeft()) await sleep(left);
      return run.abort.signal.aborted ? undefined : start;
    } catch (err) {
      this.reportError(err as Error);
      return undefined;
    }
  }

  private async callHandler(
    run: Run,
    failures: number,
  ): Promise<{ outcome: Outcome; err?: unknown; requeueAfterMs?: number }> {
    const startedAt = Date.now();
    run.startedAt = startedAt;
    let result: { outcome: Outcome; err?: unknown; requeueAfterMs?: number };
    try {
      const returned = await this.handler(run.key, {
        signal: run.abort.signal,
        failures,
        shard: run.shard,
      });
      const requeueAfterMs = returned?.requeueAfter;
      result =
        requeueAfterMs !== undefined && requeueAfterMs > 0
          ? { outcome: 'after', requeueAfterMs }
          : { outcome: 'ok' };
    } catch (err) {
      const terminal = isTerminalError(err);
      result = { outcome: terminal ? 'terminal' : 'error', err };
      if (run.abort.signal.reason instanceof ShutdownError) result.outcome = 'release';
      if (this.listenerCount('runFailed') > 0) this.emit('runFailed', run.key, err, terminal);
    }
    this.metrics?.observeWorkDuration((Date.now() - startedAt) / 1000);
    if (result.outcome === 'after' || result.outcome === 'error') this.metrics?.incRetries();
    return result;
  }

  /**
   * Maps the outcome onto BullMQ, retrying while Redis is unreachable. After a lock duration of
   * failures the lock has expired anyway and another consumer owns the key: the outcome is dropped.
   */
  private async finish(
    queue: ShardQueue,
    run: Run,
    outcome: Outcome,
    err: unknown,
    requeueAfterMs: number | undefined,
  ): Promise<unknown> {
    const giveUpAt = Date.now() + this.options.lockDurationMs;
    let step = outcome === 'after' || outcome === 'error' ? 'schedule' : 'complete';
    for (;;) {
      try {
        if (step === 'schedule') {
          if (!(await this.schedule(queue, run, outcome, requeueAfterMs))) return undefined;
          step = 'complete';
        }
        return await this.complete(queue, run, outcome, err);
      } catch (e) {
        if (lockLost.test((e as Error).message)) {
          // Around a failover ioredis may send a finish twice (to the old primary or an old
          // connection, then again after the redirection or reconnect): when the first one
          // applied, the second finds the lock gone. While the lock cannot have expired yet, that
          // is what happened; the job is finished, not taken over.
          if (Date.now() - run.renewedAt >= this.options.lockDurationMs) this.loseLease(run);
          return undefined;
        }
        this.reportError(e as Error);
        if (Date.now() > giveUpAt) return undefined;
        await sleep(retryDelayMs);
      }
    }
  }

  /**
   * RequeueAfter and backoff: a timer for the key, unless an add arrived during the run (then the
   * key runs again at once, as client-go's Done re-adds a dirty key). The timer is set before the
   * run job completes, so a consumer killed in between leaves a timer and a stalled job, never
   * neither. An error is counted only while the run still owns its key (fenced: the new owner
   * decides); a RequeueAfter of a run that lost its key is not fenced, because its timer can only
   * cost one more run later. False when the run was fenced.
   */
  private async schedule(
    queue: ShardQueue,
    run: Run,
    outcome: Outcome,
    requeueAfterMs: number | undefined,
  ): Promise<boolean> {
    let delayMs = requeueAfterMs ?? 0;
    if (outcome === 'error') {
      const lost = await this.workers
        .get(run.shard)
        ?.extendJobLocks([String(run.job.id)], [run.token], this.options.lockDurationMs);
      if (lost === undefined || lost.length > 0) {
        this.loseLease(run);
        return false;
      }
      const { baseMs, maxMs } = this.options.backoff;
      delayMs = Math.min(baseMs * 2 ** ((await queue.incFailures(run.key)) - 1), maxMs);
    } else if (run.failures > 0) await queue.forget(run.key);
    if (!(await queue.hasNext(run.key))) await queue.addTimer(run.key, delayMs);
    return true;
  }

  /** Finishes the run job in BullMQ; resolves the next job's data when one was fetched too. */
  private async complete(
    queue: ShardQueue,
    run: Run,
    outcome: Outcome,
    err: unknown,
  ): Promise<unknown> {
    const { job, token, key } = run;
    if (outcome === 'release') {
      await job.moveToWait(token);
      return undefined;
    }
    // Forget; a count of 0 at the start needs none (an addRateLimited meanwhile is not undone).
    if ((outcome === 'ok' || outcome === 'terminal') && run.failures > 0) await queue.forget(key);
    const fetch = this.fetchNext(queue.shard);
    if (outcome === 'error' || outcome === 'terminal') {
      const error = err instanceof Error ? err : new Error(String(err));
      const next = await job.moveToFailed(error, token, fetch);
      await queue.keepFailedJob(key, String(job.id), run.failedJob);
      return next;
    }
    const next = await job.moveToCompleted(undefined, token, fetch);
    if (run.failedJob !== undefined) await queue.dropFailedJob(key, run.failedJob);
    return next;
  }

  /**
   * Heartbeat. A run whose lock could not be renewed for a whole lock duration is aborted: by
   * then another consumer may run the key, and the handler should stop writing.
   */
  private async renewLocks(): Promise<void> {
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
          const worker = this.workers.get(shard);
          if (!worker) return;
          const lost = new Set(
            await worker.extendJobLocks(
              runs.map((r) => String(r.job.id)),
              runs.map((r) => r.token),
              this.options.lockDurationMs,
            ),
          );
          for (const run of runs) {
            if (!lost.has(String(run.job.id))) run.renewedAt = now;
            // A finish under way removes the lock itself; the finish tells a takeover apart.
            else if (!run.finishing) this.loseLease(run);
          }
        } catch (err) {
          this.reportError(err as Error);
          for (const run of runs) {
            if (Date.now() - run.renewedAt >= this.options.lockDurationMs) this.loseLease(run);
          }
        }
      }),
    );
  }

  /** Aborts the run and reports the lost lease once, however many paths find it. */
  private loseLease(run: Run): void {
    const reported = run.abort.signal.reason instanceof LeaseLostError;
    if (!run.abort.signal.aborted) run.abort.abort(new LeaseLostError(run.key));
    if (!reported) this.emit('leaseLost', run.key);
  }

  private readonly gauges = {
    depth: async () => (await this.depth()).reduce((total, d) => total + d.ready, 0),
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
