import { microTime, recordOf, type LeaderElectionRecord, type Lease } from './resourcelock.js';

/**
 * What a candidate knows about the Lease and when it learnt it. As in client-go, expiry is judged
 * by the candidate's own monotonic clock from the moment it OBSERVED the record change, never by
 * comparing the holder's renewTime with the local wall clock, so clock skew between nodes cannot
 * hand the lease to two candidates or keep it from a successor.
 */
export class LeaseObserver {
  private observedVersion: string | undefined;
  private observedAtMs = -Infinity;
  private current: LeaderElectionRecord | undefined;

  constructor(private readonly defaultDurationSeconds: number) {}

  /** Records the Lease as read or written at `nowMs`; the clock restarts only when it changed. */
  observe(lease: Lease, nowMs: number): void {
    const version = lease.metadata.resourceVersion;
    if (this.current !== undefined && version !== undefined && version === this.observedVersion) {
      return;
    }
    this.observedVersion = version;
    this.observedAtMs = nowMs;
    this.current = recordOf(lease, this.defaultDurationSeconds);
  }

  get record(): LeaderElectionRecord | undefined {
    return this.current;
  }

  /** The last seen holder, or undefined when the lease is free. */
  get holder(): string | undefined {
    return this.current?.holderIdentity || undefined;
  }

  /** Still valid: the record changed less than its leaseDurationSeconds ago (by our clock). */
  isValid(nowMs: number): boolean {
    const record = this.current;
    return record !== undefined && nowMs < this.observedAtMs + record.leaseDurationSeconds * 1000;
  }

  /** Another candidate holds a lease that has not expired: we must not take it. */
  isHeldByOther(identity: string, nowMs: number): boolean {
    const holder = this.holder;
    return holder !== undefined && holder !== identity && this.isValid(nowMs);
  }

  /**
   * The record to write to acquire or renew: a renewal keeps acquireTime and the transition
   * count, a takeover starts a new term.
   */
  nextRecord(identity: string, now: Date, leaseDurationSeconds: number): LeaderElectionRecord {
    const previous = this.current;
    const renewTime = microTime(now);
    if (previous && previous.holderIdentity === identity) {
      return { ...previous, leaseDurationSeconds, renewTime };
    }
    return {
      holderIdentity: identity,
      leaseDurationSeconds,
      acquireTime: renewTime,
      renewTime,
      leaderTransitions: previous ? previous.leaderTransitions + 1 : 0,
    };
  }

  /**
   * client-go's release: no holder and a one-second duration, so candidates may take the lease at
   * their next retry instead of waiting out the full lease duration.
   */
  releaseRecord(now: Date): LeaderElectionRecord {
    const at = microTime(now);
    return {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: at,
      renewTime: at,
      leaderTransitions: this.current?.leaderTransitions ?? 0,
    };
  }
}
