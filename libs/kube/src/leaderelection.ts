import { sleep } from './backoff.js';
import { recordLeaderEvent } from './leader-event.js';
import { LeaseObserver } from './lease-observer.js';
import { errorFields, silentLog, type Log } from './log.js';
import { isApiError, type RestClient } from './rest.js';
import { LeaseLock, type CallOptions, type Lease } from './resourcelock.js';

export type StoppedReason = 'lost' | 'stopped';

export interface LeaderCallbacks {
  /**
   * This candidate now leads; `signal` aborts the moment it stops leading, before anything else.
   * `term` is the Lease's leaseTransitions as this candidate took it: it grows with every new
   * holder, so writes elsewhere can be fenced against a deposed leader.
   */
  onStartedLeading(signal: AbortSignal, term: number): void;
  /**
   * Leading ended. 'lost': renewals failed for renewDeadline or another candidate holds the lease;
   * the process should exit and restart clean. 'stopped': stop() ended it (and released the lease
   * unless releaseOnCancel is false).
   */
  onStoppedLeading(reason: StoppedReason): void;
  /** The holder this candidate saw changed (undefined: nobody holds it). */
  onNewLeader?(identity: string | undefined): void;
}

/** `leader_election_master_status{name}`; the observability LeaderElectionMetrics fits. */
export interface LeaderStatusGauge {
  set(name: string, leading: boolean): void;
  /** Counts writes of this leader's term that a newer term refused. */
  fenced?(name: string, writes: number): void;
}

export interface LeaderElectorOptions {
  readonly rest: RestClient;
  readonly namespace: string;
  /** The Lease's name; also the metric's `name` label. */
  readonly name: string;
  /** holderIdentity: unique per process (pod name, or hostname + UUID). */
  readonly identity: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  /**
   * reportingController of the "became leader" Event written on the Lease; no Event when
   * undefined.
   */
  readonly eventController?: string;
  /** Give the lease up on stop(), so a standby need not wait out the lease. Default true. */
  readonly releaseOnCancel?: boolean;
  readonly callbacks: LeaderCallbacks;
  readonly metrics?: LeaderStatusGauge;
  readonly log?: Log;
  /** Monotonic milliseconds; judges expiry and deadlines. */
  readonly now?: () => number;
  /** Wall clock for the renewTime/acquireTime written into the Lease (informational only). */
  readonly wallClock?: () => Date;
  readonly random?: () => number;
}

/** controller-runtime's defaults. */
const leaderElectionDefaults = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/** Followers' retries are spread by up to this fraction so candidates do not collide in step. */
const RETRY_JITTER = 0.2;

/**
 * client-go's LeaderElector on a coordination.k8s.io/v1 Lease: followers try every retryPeriod
 * for as long as they run; the leader renews every retryPeriod and, when no renewal succeeded for
 * renewDeadline, stops leading at once (before the lease can expire for anyone else, as
 * leaseDuration > renewDeadline). Leases give no fencing by themselves: a leader paused longer
 * than the lease acts until its next renewal fails, so what it writes carries its term (see
 * onStartedLeading) for the store to refuse.
 */
export class LeaderElector {
  private readonly lock: LeaseLock;
  private readonly observer: LeaseObserver;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly requestTimeoutMs: number;
  private readonly log: Log;
  private readonly now: () => number;
  private readonly wallClock: () => Date;
  private readonly random: () => number;
  private readonly stopping = new AbortController();
  private leading = false;
  private lastWritten: Lease | undefined;
  private reportedLeader: string | undefined;
  private readonly loss = { sinceRenewalMs: 0, lastAttemptMs: 0, wokeLateMs: 0 };
  private running: Promise<StoppedReason> | undefined;

  constructor(private readonly options: LeaderElectorOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? leaderElectionDefaults.leaseDurationMs;
    this.renewDeadlineMs = options.renewDeadlineMs ?? leaderElectionDefaults.renewDeadlineMs;
    this.retryPeriodMs = options.retryPeriodMs ?? leaderElectionDefaults.retryPeriodMs;
    validateTimings(this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    // controller-runtime: one hung request must not use up the whole renew deadline.
    this.requestTimeoutMs = Math.max(this.renewDeadlineMs / 2, 1000);
    this.lock = new LeaseLock(options.rest, options.namespace, options.name);
    this.observer = new LeaseObserver(Math.ceil(this.leaseDurationMs / 1000));
    this.log = options.log ?? silentLog;
    this.now = options.now ?? (() => performance.now());
    this.wallClock = options.wallClock ?? (() => new Date());
    this.random = options.random ?? Math.random;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** The holder last seen in the Lease (this candidate's identity while it leads). */
  get leader(): string | undefined {
    return this.observer.holder;
  }

  get identity(): string {
    return this.options.identity;
  }

  /**
   * Campaigns until leading, leads until leadership ends, and resolves with why: 'lost', or
   * 'stopped' (stop() while leading or before ever leading).
   */
  run(): Promise<StoppedReason> {
    this.running ??= this.campaign();
    return this.running;
  }

  /** Stops campaigning or leading; a leader releases the lease (unless releaseOnCancel=false). */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  private async campaign(): Promise<StoppedReason> {
    this.setGauge(false);
    const acquiredAt = await this.acquire();
    if (acquiredAt === undefined) return 'stopped';
    const leadership = new AbortController();
    this.leading = true;
    this.setGauge(true);
    this.log.info('became leader', {
      lease: this.lock.describe(),
      identity: this.identity,
      term: this.observer.record?.leaderTransitions ?? 0,
    });
    this.options.callbacks.onStartedLeading(
      leadership.signal,
      this.observer.record?.leaderTransitions ?? 0,
    );
    if (this.options.eventController && this.lastWritten) {
      void recordLeaderEvent(
        this.options.rest,
        this.lastWritten,
        this.identity,
        this.options.eventController,
        this.log,
      );
    }
    const reason = await this.renewUntilLost(acquiredAt);
    // Stop acting first, so no work overlaps a successor that takes the released lease.
    this.leading = false;
    leadership.abort();
    this.setGauge(false);
    if (reason === 'lost') {
      this.log.error('leader election lost', { lease: this.lock.describe(), ...this.loss });
    } else if (this.options.releaseOnCancel ?? true) await this.release();
    this.options.callbacks.onStoppedLeading(reason);
    return reason;
  }

  /** Tries every retryPeriod (jittered) until it holds the lease; returns when the winning try began. */
  private async acquire(): Promise<number | undefined> {
    this.log.info('attempting to acquire leader lease', { lease: this.lock.describe() });
    while (!this.stopping.signal.aborted) {
      const started = this.now();
      // A follower's request is cut short by stop(), so a standby shuts down at once.
      const call = { timeoutMs: this.requestTimeoutMs, signal: this.stopping.signal };
      if (await this.tryAcquireOrRenew(call)) return started;
      await sleep(this.retryPeriodMs * (1 + RETRY_JITTER * this.random()), this.stopping.signal);
    }
    return undefined;
  }

  /**
   * Renews every retryPeriod, counted from the start of the previous attempt, until it cannot.
   * The renew deadline counts from the start of the last successful renewal (the latest moment the
   * Lease can have been written), so time spent waiting for a slow answer is time the deadline has
   * used up: sleeping a whole retry period after it as well would leave a slow but successful
   * renewal too little time, and a leader on a loaded API server would give up a lease it can hold.
   */
  private async renewUntilLost(acquiredAt: number): Promise<StoppedReason> {
    let renewedAt = acquiredAt;
    let attemptedAt = acquiredAt;
    for (;;) {
      const wait = Math.max(0, attemptedAt + this.retryPeriodMs - this.now());
      const sleptAt = this.now();
      await sleep(wait, this.stopping.signal);
      if (this.stopping.signal.aborted) return 'stopped';
      const deadline = renewedAt + this.renewDeadlineMs;
      const started = this.now();
      // Why a deadline passed, for the line that reports the loss: a slow API server shows in the
      // attempt, a stalled process (CPU starvation, a long GC pause) in a late wake-up.
      this.loss.wokeLateMs = Math.round(started - sleptAt - wait);
      this.loss.sinceRenewalMs = Math.round(started - renewedAt);
      attemptedAt = started;
      if (started >= deadline) return 'lost';
      const renewed = await this.tryAcquireOrRenew({
        timeoutMs: Math.min(this.requestTimeoutMs, deadline - started),
      });
      this.loss.lastAttemptMs = Math.round(this.now() - started);
      this.loss.sinceRenewalMs = Math.round(this.now() - (renewed ? started : renewedAt));
      if (renewed) renewedAt = started;
      else if (this.observer.isHeldByOther(this.identity, this.now())) return 'lost';
      else if (this.now() >= deadline) return 'lost';
      else this.log.warn('failed to renew leader lease, retrying', { lease: this.lock.describe() });
    }
  }

  /** One attempt, client-go's tryAcquireOrRenew; false on any failure (it is simply retried). */
  private async tryAcquireOrRenew(call: CallOptions): Promise<boolean> {
    const identity = this.identity;
    const durationSeconds = Math.ceil(this.leaseDurationMs / 1000);
    try {
      // A valid leader renews from the Lease it last wrote, without reading it first.
      if (this.leading && this.lastWritten && this.observer.isValid(this.now())) {
        const renewed = await this.write(this.lastWritten, call);
        if (renewed) return true;
      }
      const lease = await this.lock.get(call);
      if (!lease) {
        const created = await this.lock.create(
          this.observer.nextRecord(identity, this.wallClock(), durationSeconds),
          call,
        );
        this.remember(created);
        return true;
      }
      this.observer.observe(lease, this.now());
      this.reportLeader();
      if (this.observer.isHeldByOther(identity, this.now())) return false;
      return await this.write(lease, call);
    } catch (err) {
      this.logAttemptFailure(err);
      return false;
    }
  }

  /** Writes our record over `lease`; false when another writer won the race (409). */
  private async write(lease: Lease, call: CallOptions): Promise<boolean> {
    const durationSeconds = Math.ceil(this.leaseDurationMs / 1000);
    const record = this.observer.nextRecord(this.identity, this.wallClock(), durationSeconds);
    try {
      this.remember(await this.lock.update(lease, record, call));
      return true;
    } catch (err) {
      if (isApiError(err, 409)) return false;
      throw err;
    }
  }

  private remember(lease: Lease): void {
    this.lastWritten = lease;
    this.observer.observe(lease, this.now());
    this.reportLeader();
  }

  private async release(): Promise<void> {
    if (!this.lastWritten) return;
    try {
      const released = await this.lock.update(
        this.lastWritten,
        this.observer.releaseRecord(this.wallClock()),
        { timeoutMs: this.requestTimeoutMs },
      );
      this.observer.observe(released, this.now());
      this.log.info('released leader lease', { lease: this.lock.describe() });
    } catch (err) {
      // Someone else already holds it, or the server is unreachable: the lease then simply expires.
      this.log.warn('could not release leader lease', {
        lease: this.lock.describe(),
        ...errorFields(err),
      });
    }
  }

  private reportLeader(): void {
    const holder = this.observer.holder;
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    this.log.info('new leader observed', { lease: this.lock.describe(), leader: holder ?? null });
    this.options.callbacks.onNewLeader?.(holder);
  }

  private logAttemptFailure(err: unknown): void {
    const fields = { lease: this.lock.describe(), ...errorFields(err) };
    if (this.leading) this.log.warn('leader lease request failed', fields);
    else this.log.debug('leader lease request failed', fields);
  }

  private setGauge(leading: boolean): void {
    this.options.metrics?.set(this.options.name, leading);
  }
}

/** client-go's validation: the leader must give up before the lease can expire for others. */
export function validateTimings(
  leaseDurationMs: number,
  renewDeadlineMs: number,
  retryPeriodMs: number,
): void {
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new Error(
      `leaseDuration (${leaseDurationMs}ms) must be greater than renewDeadline (${renewDeadlineMs}ms)`,
    );
  }
  if (!(renewDeadlineMs > (1 + RETRY_JITTER) * retryPeriodMs)) {
    throw new Error(
      `renewDeadline (${renewDeadlineMs}ms) must be greater than ${1 + RETRY_JITTER} × retryPeriod (${retryPeriodMs}ms)`,
    );
  }
  if (!(retryPeriodMs > 0)) throw new Error(`retryPeriod (${retryPeriodMs}ms) must be positive`);
}
