import { Backoff, errorFields, silentLog, sleep, type BackoffOptions, type Log } from '#kube';
import { isFencedError, type FencedError } from '#queue';

/**
 * Where keys go: the queue library's WorkQueue.addBulk fits as it is. With a `term` it refuses
 * (FencedError) the adds of a leader whose term a newer one has fenced.
 */
export interface KeySink {
  addBulk(
    keys: Iterable<string>,
    options?: { priority?: 'normal' | 'low'; term?: number },
  ): Promise<unknown>;
  /** Starts a term: older terms' writes are refused from now on (FencedError if a newer leads). */
  raiseFence?(term: number): Promise<void>;
  /** How often the sink's Redis connection changed so far (read before writes to confirm). */
  connectionChanges?(): number;
  /**
   * Resolves once every online replica holds what was written on the sink's connection to the
   * shards of `keys` since `since`; rejects otherwise (the writes are to be made again).
   */
  confirm?(keys: Iterable<string>, since: number): Promise<void>;
}

/**
 * Writes the snapshots of the given keys as they are now; a key's snapshot goes out before the key.
 * With a `term`, a newer term's fence refuses the writes (FencedError).
 */
export interface SnapshotWriter {
  write(keys: readonly string[], term?: number): Promise<void>;
}

export interface KeyPumpOptions {
  readonly sink: KeySink;
  /** When set, every key's snapshot is written before the key is sent. */
  readonly snapshots?: SnapshotWriter;
  /** Most keys per call to the sink. */
  readonly batchSize?: number;
  /** How long a settling key must see no further change before it is sent (see settle()). */
  readonly settleMs?: number;
  /**
   * Of keys given to recheck(), those whose last run proved them converged, which are not sent.
   * Without it, rechecked keys are sent at low priority like addLow's.
   */
  readonly converged?: (keys: readonly string[]) => Promise<ReadonlySet<string>>;
  /** The leader term every snapshot write and key add carries (see the queue's fence). */
  readonly term?: number;
  /** A newer term refused a write: the pump has stopped; this term's writes are over. */
  readonly onFenced?: (err: FencedError) => void;
  readonly backoff?: BackoffOptions;
  readonly log?: Log;
}

/**
 * The watcher's outbox in front of the queue: keys wait in two local sets (normal, and low
 * priority for bulk re-adds), so bursts coalesce before they reach Redis, informer handlers never
 * wait on the network, and a key whose send failed stays pending and is sent again after a
 * backoff (a Redis outage delays keys, never drops them). Normal keys go first, like the queue's
 * own priorities; a key pending at both priorities is sent once, at normal.
 *
 * With a SnapshotWriter, keys whose snapshot changed wait in a third set (touch, and every add),
 * and each round writes every such snapshot before it sends its batch of keys: a key reaches the
 * queue only after a snapshot at least as new as the change that added it. Snapshots are written
 * from the caches as they are at that moment, so a burst of changes to one key costs one write.
 *
 * Keys given to settle() (the operator's own writes coming back) wait locally until no further
 * change of theirs arrived for `settleMs`, then go out at low priority: one verifying run after all
 * of a run's writes are in the snapshot, rather than one racing the run's last write.
 *
 * Keys given to recheck() (a resync: nothing changed) come last: those `converged` names are
 * dropped, the rest go out as addLow's do. A failed check keeps them all.
 */
export class KeyPump {
  private readonly normal = new Set<string>();
  private readonly low = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly rechecks = new Set<string>();
  /** Rechecked keys since the rechecks last ran dry: proven converged, and sent on. */
  private readonly rechecked = { converged: 0, sent: 0 };
  /** Settling keys → when they are due, in due order (every entry is re-inserted when pushed back). */
  private readonly settling = new Map<string, number>();
  private settleTimer: NodeJS.Timeout | undefined;
  private readonly settleMs: number;
  private readonly backoff: Backoff;
  private readonly log: Log;
  private readonly batchSize: number;
  private readonly stopping = new AbortController();
  private wake: (() => void) | undefined;
  private idle: { promise: Promise<void>; resolve: () => void } | undefined;
  private loop: Promise<void> | undefined;
  private sending = 0;
  /** The round being sent, settled once its outcome (refusals included) has been handled. */
  private inFlight: Promise<void> | undefined;

  constructor(private readonly options: KeyPumpOptions) {
    this.backoff = new Backoff(options.backoff ?? { initialMs: 100, maxMs: 10_000 });
    this.log = options.log ?? silentLog;
    this.batchSize = options.batchSize ?? 1000;
    this.settleMs = options.settleMs ?? keyPumpDefaults.settleMs;
  }

  add(key: string): void {
    if (this.stopping.signal.aborted) return;
    this.touch(key);
    this.low.delete(key);
    this.rechecks.delete(key);
    // The run this asks for reads a snapshot that holds whatever the key was settling for.
    this.settling.delete(key);
    this.normal.add(key);
  }

  /**
   * The key's snapshot changed in a way its last run may not have seen (client-go's AddAfter with
   * a debounce): the snapshot is rewritten now, and the key is sent at low priority once no further
   * change of it arrived for `settleMs`. A key already waiting to be sent needs nothing more.
   */
  settle(key: string): void {
    if (this.stopping.signal.aborted) return;
    this.touch(key);
    this.rechecks.delete(key);
    if (this.normal.has(key) || this.low.has(key)) return;
    this.settling.delete(key);
    this.settling.set(key, performance.now() + this.settleMs);
    this.settleTimer ??= setTimeout(() => this.releaseSettled(), this.settleMs);
  }

  addLow(key: string): void {
    if (this.stopping.signal.aborted) return;
    this.touch(key);
    this.rechecks.delete(key);
    if (!this.normal.has(key)) this.low.add(key);
  }

  /**
   * Nothing of the key changed (a resync): it is sent at low priority unless its last run proved
   * it converged. A key already waiting to be sent or settling needs nothing more.
   */
  recheck(key: string): void {
    if (this.stopping.signal.aborted) return;
    if (this.normal.has(key) || this.low.has(key) || this.settling.has(key)) return;
    this.rechecks.add(key);
    this.wake?.();
  }

  /** The key's snapshot changed; it is rewritten without the key being sent. */
  touch(key: string): void {
    if (this.stopping.signal.aborted) return;
    if (this.options.snapshots) this.dirty.add(key);
    this.wake?.();
  }

  /** Keys and snapshots waiting, settling or being sent. */
  get pending(): number {
    return (
      this.normal.size +
      this.low.size +
      this.settling.size +
      this.dirty.size +
      this.rechecks.size +
      this.sending
    );
  }

  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops sending at once; keys still pending are dropped (the next leader re-adds every key).
   * Does not wait for a send in flight: with Redis down that could outlast a shutdown's grace.
   */
  stop(): void {
    this.stopping.abort();
    clearTimeout(this.settleTimer);
    this.settling.clear();
    this.rechecks.clear();
    this.wake?.();
  }

  /**
   * Resolves once the round being sent when the pump stopped has been answered and handled (a
   * refused write logged and reported), or after `timeoutMs`, whichever comes first: a leader that
   * loses its term accounts for its last writes without waiting long on a Redis that is gone.
   */
  async lastRoundSettled(timeoutMs: number): Promise<void> {
    const inFlight = this.inFlight;
    if (!inFlight) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      inFlight,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  /** Resolves when nothing is pending (or the pump stopped). */
  whenIdle(): Promise<void> {
    if (this.pending === 0 || this.stopping.signal.aborted) return Promise.resolve();
    if (!this.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.idle = { promise, resolve };
    }
    return this.idle.promise;
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      const [set, priority] =
        this.normal.size > 0 ? [this.normal, 'normal' as const] : [this.low, 'low' as const];
      if (set.size === 0 && this.dirty.size === 0 && this.rechecks.size > 0) {
        await this.sortRechecks();
        continue;
      }
      if (set.size === 0 && this.dirty.size === 0) {
        this.notifyIdle();
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      // Every key of the batch was touched when it was added, so taking the dirty set after the
      // batch covers them all.
      const batch = take(set, this.batchSize);
      const dirty = take(this.dirty, Infinity);
      this.sending = batch.length + dirty.length;
      let settled!: () => void;
      this.inFlight = new Promise<void>((resolve) => (settled = resolve));
      try {
        await this.writeSnapshots(dirty);
        if (batch.length > 0) {
          await this.options.sink.addBulk(batch, { priority, term: this.options.term });
        }
        this.sending = 0;
        this.backoff.reset();
        settled();
      } catch (err) {
        this.sending = 0;
        // Before the stop check: a refusal that arrives after this term ended is still counted.
        if (isFencedError(err)) {
          // A newer leader writes now: retrying could only be refused again, or worse, land
          // after it lost its own term. What is pending is the newer leader's to send.
          this.log.error('a newer leader fenced this one; its writes were refused', {
            term: err.term,
            fence: err.fence,
            refused: err.refused,
          });
          this.stop();
          this.options.onFenced?.(err);
          settled();
          break;
        }
        settled();
        if (signal.aborted) break;
        for (const key of dirty) this.touch(key);
        for (const key of batch) {
          if (priority === 'normal') this.add(key);
          else this.addLow(key);
        }
        const delayMs = Math.round(this.backoff.next());
        this.log.warn('enqueue failed, keys kept for retry', {
          keys: batch.length,
          snapshots: dirty.length,
          priority,
          retryInMs: delayMs,
          ...errorFields(err),
        });
        await sleep(delayMs, signal);
      }
    }
    this.notifyIdle();
  }

  /** Sends on, as addLow's, the next batch of rechecked keys not proven converged. */
  private async sortRechecks(): Promise<void> {
    const batch = take(this.rechecks, this.batchSize);
    this.sending = batch.length;
    let converged: ReadonlySet<string> = new Set();
    try {
      converged = (await this.options.converged?.(batch)) ?? converged;
    } catch (err) {
      this.log.debug('could not read which keys are converged; sending them all', {
        keys: batch.length,
        ...errorFields(err),
      });
    }
    this.sending = 0;
    // A key that began settling meanwhile is sent when it settled.
    for (const key of batch) if (!converged.has(key) && !this.settling.has(key)) this.addLow(key);
    this.rechecked.converged += converged.size;
    this.rechecked.sent += batch.length - converged.size;
    if (this.rechecks.size > 0) return;
    // One line per resync: how much of it the workers' marks spared the queue.
    this.log.info('rechecked unchanged keys', { ...this.rechecked });
    this.rechecked.converged = this.rechecked.sent = 0;
  }

  private async writeSnapshots(keys: readonly string[]): Promise<void> {
    const writer = this.options.snapshots;
    if (!writer) return;
    for (let i = 0; i < keys.length; i += this.batchSize) {
      await writer.write(keys.slice(i, i + this.batchSize), this.options.term);
    }
  }

  /** Moves the keys whose settle time is up to the low set; re-arms for the next one. */
  private releaseSettled(): void {
    this.settleTimer = undefined;
    const now = performance.now();
    for (const [key, due] of this.settling) {
      if (due > now) {
        this.settleTimer = setTimeout(() => this.releaseSettled(), due - now);
        break;
      }
      this.settling.delete(key);
      if (!this.normal.has(key)) this.low.add(key);
    }
    this.wake?.();
  }

  private notifyIdle(): void {
    if (this.pending > 0 && !this.stopping.signal.aborted) return;
    this.idle?.resolve();
    this.idle = undefined;
  }
}

const keyPumpDefaults = {
  /**
   * Above the time one run's writes take to come back through the watches at ordinary API
   * latencies, so the verifying run sees them all; a run slower than this only costs one more
   * verifying run (or a 409 and a retry), never a missed change.
   */
  settleMs: 1000,
};

function take(set: Set<string>, max: number): string[] {
  const batch: string[] = [];
  for (const key of set) {
    if (batch.length >= max) break;
    batch.push(key);
  }
  for (const key of batch) set.delete(key);
  return batch;
}
