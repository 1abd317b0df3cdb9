/** The parts of a BackupJob the tracker reads. */
export interface TrackedBackupJob {
  metadata: { namespace?: string; name?: string; generation?: number };
  status?: {
    observedGeneration?: number;
    conditions?: { type: string; status: string }[];
  };
}

export interface Progress {
  readonly backupJobs: number;
  readonly cronJobs: number;
  /** BackupJobs Ready=True at their current generation. */
  readonly ready: number;
  /** Spec changes whose generation the status has not observed yet. */
  readonly pendingChanges: number;
  /** When the last BackupJob became Ready (ms since the epoch). */
  readonly lastReadyAt: number;
}

export interface BurstLatency {
  readonly key: string;
  /** ms from the BackupJob's creation to its CronJob's creation; NaN while missing. */
  readonly toCronJob: number;
  /** ms from creation to the first Ready=True at the created generation. */
  readonly toReady: number;
}

function keyOf(obj: TrackedBackupJob): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

function isReady(obj: TrackedBackupJob): boolean {
  const ready = obj.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && obj.status?.observedGeneration === obj.metadata.generation;
}

/**
 * Follows every write the API server stores and times what the operator did: when each
 * BackupJob got its CronJob and became Ready, and when each spec change was observed
 * (status.observedGeneration caught up). It sees writes as they are stored, so no client-side
 * watch delay is measured in.
 */
export class Tracker {
  private readonly created = new Map<string, number>();
  private readonly cronJobAt = new Map<string, number>();
  private readonly readyAt = new Map<string, number>();
  private readonly readyNow = new Set<string>();
  private readonly pendingChanges = new Map<string, { generation: number; at: number }[]>();
  private changeLatencies: number[] = [];
  private lastReadyAt = Number.NaN;

  constructor(private readonly now: () => number = Date.now) {}

  onBackupJob(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: TrackedBackupJob): void {
    const key = keyOf(obj);
    const t = this.now();
    if (type === 'DELETED') {
      this.readyNow.delete(key);
      return;
    }
    if (type === 'ADDED' && !this.created.has(key)) this.created.set(key, t);
    if (isReady(obj)) {
      if (!this.readyNow.has(key)) this.lastReadyAt = t;
      this.readyNow.add(key);
      if (!this.readyAt.has(key)) this.readyAt.set(key, t);
    } else this.readyNow.delete(key);
    this.observeGeneration(key, obj.status?.observedGeneration ?? 0, t);
  }

  onCronJob(type: 'ADDED' | 'MODIFIED' | 'DELETED', ownerKey: string | undefined): void {
    if (type === 'ADDED' && ownerKey && !this.cronJobAt.has(ownerKey)) {
      this.cronJobAt.set(ownerKey, this.now());
    }
  }

  /** A spec change to `generation` was written at `at` (ms). */
  specChanged(key: string, generation: number, at = this.now()): void {
    let list = this.pendingChanges.get(key);
    if (!list) this.pendingChanges.set(key, (list = []));
    list.push({ generation, at });
  }

  private observeGeneration(key: string, observed: number, t: number): void {
    const list = this.pendingChanges.get(key);
    if (!list) return;
    const still = list.filter((c) => {
      if (c.generation > observed) return true;
      this.changeLatencies.push(t - c.at);
      return false;
    });
    if (still.length) this.pendingChanges.set(key, still);
    else this.pendingChanges.delete(key);
  }

  counts(): Progress {
    let pending = 0;
    for (const list of this.pendingChanges.values()) pending += list.length;
    return {
      backupJobs: this.created.size,
      cronJobs: this.cronJobAt.size,
      ready: this.readyNow.size,
      pendingChanges: pending,
      lastReadyAt: this.lastReadyAt,
    };
  }

  /** Creation → CronJob and creation → Ready for each key created at or after `since`. */
  burstLatencies(since: number): BurstLatency[] {
    const out: BurstLatency[] = [];
    for (const [key, at] of this.created) {
      if (at < since) continue;
      out.push({
        key,
        toCronJob: (this.cronJobAt.get(key) ?? Number.NaN) - at,
        toReady: (this.readyAt.get(key) ?? Number.NaN) - at,
      });
    }
    return out;
  }

  /** Change → observedGeneration latencies recorded so far, and clears them. */
  takeChangeLatencies(): number[] {
    const out = this.changeLatencies;
    this.changeLatencies = [];
    return out;
  }
}
