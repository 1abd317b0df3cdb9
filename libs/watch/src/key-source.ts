import { ANNOTATION_OWNER_NAME, BACKUPJOBS, LABEL_MANAGED_BY, MANAGED_BY_VALUE } from '#api';
import {
  createdByOther,
  CRONJOBS,
  errorFields,
  Informer,
  JOBS,
  objectKey,
  resourceVersionChanged,
  silentLog,
  sleep,
  splitKey,
  type AddPredicate,
  type BackoffOptions,
  type EventHandler,
  type KubeObject,
  type Log,
  type RestClient,
  type UpdatePredicate,
} from '#kube';
import { isFencedError, type FencedError } from '#queue';
import { cronJobName } from '#reconciler';
import {
  worldFingerprint,
  type ConvergedMarks,
  type SnapshotStore,
  type WorldSnapshot,
} from '#snapshot';
import { backupJobKeyOfCronJob, backupJobKeyOfJob } from './handler.js';
import { KeyPump, type KeySink } from './key-pump.js';
import { OwnerIndex } from './owner-index.js';
import { backupJobUpdatePredicate, cronJobUpdatePredicate } from './predicate.js';
import { confirmedSnapshotWriter } from './snapshot-writer.js';
import { stripBackupJob, stripCronJob, stripJob, withoutWriters } from './transform.js';

export interface KeySourceOptions {
  readonly rest: RestClient;
  readonly queue: KeySink;
  /**
   * Where each BackupJob's snapshot is written before its key is enqueued, for workers to
   * reconcile from; without one, workers read from the API server.
   */
  readonly snapshots?: SnapshotStore;
  /**
   * What the workers' runs proved converged: a resync (or a relist that brings nothing new) skips
   * a key whose last run, over the objects the caches hold now and under the configuration the
   * workers run now, wrote nothing and is not yet due again. Without it every such key is sent.
   */
  readonly converged?: Pick<ConvergedMarks, 'converged'>;
  /** Counts the keys a resync skipped as converged (for a metric). */
  readonly onConvergedSkipped?: (keys: number) => void;
  /** Namespaces to watch (one watch each per resource); empty → all namespaces. */
  readonly namespaces?: readonly string[];
  /**
   * The field manager the operator's worker writes with (its User-Agent prefix); BackupJob status
   * and CronJob writes by any other manager count as tampering and are reconciled, its own are
   * not. Default 'backupjob-operator'.
   */
  readonly fieldManager?: string;
  readonly resyncPeriodMs?: number;
  readonly watchdogMs?: number;
  readonly pageSize?: number;
  /** How long the operator's own writes must settle before their verifying run (KeyPump.settle). */
  readonly settleMs?: number;
  /**
   * This leader's term (the Lease's leaseTransitions when it took the lease): every snapshot
   * write and key add carries it, and Redis refuses them once a newer term wrote.
   */
  readonly term?: number;
  /** Redis refused a write of this term: a newer leader leads, and this controller has stopped. */
  readonly onFenced?: (err: FencedError) => void;
  readonly watchTimeoutSeconds?: () => number;
  readonly backoff?: BackoffOptions;
  readonly log?: Log;
}

/** Children the operator made carry this label; their informers select on it. */
export const CHILD_SELECTOR = `${LABEL_MANAGED_BY}=${MANAGED_BY_VALUE}`;

/** How often a new term checks whether its informers have synced. */
const SYNC_POLL_MS = 100;

/** How long stop() waits for the answer to a send in flight (a Redis that is gone never answers). */
const LAST_ROUND_GRACE_MS = 1000;

/**
 * The watcher's controller (controller-runtime's For(BackupJob).Owns(CronJob).Owns(Job)): turns
 * every change of a BackupJob or of its children into the BackupJob's `namespace/name` key, after
 * rewriting its snapshot. Changes the predicates pass (anyone else's writes, deletions) go at
 * normal priority at once; initial lists at low priority; relists of unchanged objects and
 * resyncs at low priority too, except keys the workers' marks prove converged; the operator's own
 * writes settle first and then go at low priority, because a run may have decided from a
 * snapshot taken before such a write reached the caches (a lagging watch), and only a run that
 * sees the write can tell whether the object is still what the spec asks for.
 * Runs only while leading: create one per leadership term, stop it when the term ends.
 */
export class KeySource {
  readonly backupJobs: Informer;
  readonly cronJobs: Informer;
  readonly jobs: Informer;
  private readonly pump: KeyPump;
  private readonly log: Log;
  private readonly jobsByOwner = new OwnerIndex();
  private stopped = false;

  constructor(private readonly options: KeySourceOptions) {
    this.log = options.log ?? silentLog;
    const store = options.snapshots;
    this.pump = new KeyPump({
      sink: options.queue,
      log: this.log,
      settleMs: options.settleMs,
      term: options.term,
      onFenced: (err) => {
        void this.stop();
        options.onFenced?.(err);
      },
      snapshots:
        store && confirmedSnapshotWriter(store, options.queue, (key) => this.snapshot(key)),
      converged: options.converged && ((keys) => this.provenConverged(keys)),
    });
    const common = {
      rest: options.rest,
      namespaces: options.namespaces,
      resyncPeriodMs: options.resyncPeriodMs,
      watchdogMs: options.watchdogMs,
      pageSize: options.pageSize,
      watchTimeoutSeconds: options.watchTimeoutSeconds,
      backoff: options.backoff,
      log: this.log,
    };
    this.backupJobs = new Informer({ ...common, resource: BACKUPJOBS, transform: stripBackupJob });
    // Children: a resync of theirs adds nothing the BackupJobs' own resync does not.
    const childCommon = { ...common, labelSelector: CHILD_SELECTOR, resyncPeriodMs: 0 };
    this.cronJobs = new Informer({ ...childCommon, resource: CRONJOBS, transform: stripCronJob });
    this.jobs = new Informer({ ...childCommon, resource: JOBS, transform: stripJob });

    const fieldManager = options.fieldManager ?? MANAGED_BY_VALUE;
    this.backupJobs.addEventHandler(this.forObject(backupJobUpdatePredicate(fieldManager)));
    // The index first, so the Jobs' own handler composes snapshots from an index that knows them.
    this.jobs.addEventHandler({
      onAdd: (job) => this.jobsByOwner.set(objectKey(job), this.ownerOfJob(job)),
      onUpdate: (_old, job) => this.jobsByOwner.set(objectKey(job), this.ownerOfJob(job)),
      onDelete: (job) => this.jobsByOwner.delete(objectKey(job)),
    });
    this.cronJobs.addEventHandler(
      this.forOwner(
        backupJobKeyOfCronJob,
        cronJobUpdatePredicate(fieldManager),
        createdByOther(fieldManager),
      ),
    );
    this.jobs.addEventHandler(this.forOwner((job) => this.ownerOfJob(job)));
  }

  /**
   * Starts the watches; keys (and snapshots) go out once every informer has synced, as
   * controller-runtime starts workers only after WaitForCacheSync: a snapshot written before the
   * CronJob informer had listed would show a BackupJob without its CronJob.
   */
  start(): void {
    const fenced = this.raiseFence();
    for (const informer of this.informers()) informer.start();
    void this.startPumpWhenSynced(fenced);
  }

  /**
   * Stops enqueueing at once, then the watches; waits (briefly) for the answer to a send already
   * in flight, so a write refused by a newer term is still logged and counted.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pump.stop();
    await Promise.all([
      ...this.informers().map((i) => i.stop()),
      this.pump.lastRoundSettled(LAST_ROUND_GRACE_MS),
    ]);
  }

  /** Every informer finished its first list. */
  get synced(): boolean {
    return this.informers().every((i) => i.synced);
  }

  /** Every watch is alive (its last list or watch attempt worked). */
  get healthy(): boolean {
    return this.informers().every((i) => i.healthy);
  }

  /** Keys not yet handed to the queue. */
  get pendingKeys(): number {
    return this.pump.pending;
  }

  /** Resolves when every key produced so far has reached the queue. */
  flushed(): Promise<void> {
    return this.pump.whenIdle();
  }

  /**
   * Re-adds every known BackupJob key at low priority, e.g. when the queue lost its data; each
   * snapshot is rewritten before its key goes out, since Redis lost those too.
   */
  reAddAll(): number {
    let count = 0;
    for (const key of this.backupJobs.keys()) {
      this.enqueueLow(key);
      count++;
    }
    this.log.info('re-added every key', { keys: count });
    return count;
  }

  /**
   * The snapshot of one BackupJob key from the caches as they are now; undefined when the
   * BackupJob is gone, which deletes the snapshot, so a deleted object is never revived.
   */
  snapshot(key: string): WorldSnapshot | undefined {
    const world = this.cached(key);
    if (!world) return undefined;
    const { backupJob, cronJob, jobs } = world;
    return {
      backupJob: withoutWriters(backupJob),
      ...(cronJob && { cronJob: withoutWriters(cronJob) }),
      jobs: jobs.map(withoutWriters),
    };
  }

  /** The key's objects as the caches hold them (managedFields included). */
  private cached(key: string): WorldSnapshot | undefined {
    const backupJob = this.backupJobs.get(key);
    if (!backupJob) return undefined;
    const { namespace, name } = splitKey(key);
    const cronJob = this.cronJobs.get(`${namespace}/${cronJobName(name)}`);
    const jobs: KubeObject[] = [];
    for (const jobKey of this.jobsByOwner.children(key)) {
      const job = this.jobs.get(jobKey);
      if (job) jobs.push(job);
    }
    return { backupJob, cronJob, jobs };
  }

  /** Of these keys, those the workers' marks prove converged over the caches as they are now. */
  private async provenConverged(keys: readonly string[]): Promise<ReadonlySet<string>> {
    const marks = this.options.converged;
    if (!marks) return new Set();
    const entries: [string, string][] = [];
    for (const key of keys) {
      const world = this.cached(key);
      if (world) entries.push([key, worldFingerprint(world)]);
    }
    const converged = await marks.converged(entries, Date.now());
    if (converged.size > 0) this.options.onConvergedSkipped?.(converged.size);
    return converged;
  }

  /**
   * Raises the queue's fences to this term at once, so a deposed leader's late writes are refused
   * from the start of the term rather than from this leader's first write to each shard. Best
   * effort: with Redis unreachable, the first snapshot write to each shard raises its fence.
   */
  private async raiseFence(): Promise<void> {
    const { term, queue } = this.options;
    if (term === undefined || !queue.raiseFence) return;
    try {
      await queue.raiseFence(term);
    } catch (err) {
      if (isFencedError(err)) {
        this.log.error('a newer leader fenced this one at the start of its term', {
          term: err.term,
          fence: err.fence,
        });
        void this.stop();
        this.options.onFenced?.(err);
        return;
      }
      this.log.warn('could not raise the fence for this term; its first writes will', {
        term,
        ...errorFields(err),
      });
    }
  }

  private async startPumpWhenSynced(fenced: Promise<void>): Promise<void> {
    await fenced;
    while (!this.synced) {
      if (this.stopped) return;
      await sleep(SYNC_POLL_MS);
    }
    if (this.stopped) return;
    this.pump.start();
    if (this.options.snapshots) await this.sweepSnapshots(this.options.snapshots);
  }

  /**
   * Deletes the snapshots of BackupJobs that no longer exist (deleted while no watcher led, or
   * while Redis was unreachable). Each goes through the pump, which composes it at write time,
   * so a BackupJob created meanwhile keeps its snapshot.
   */
  private async sweepSnapshots(store: SnapshotStore): Promise<void> {
    let stale = 0;
    try {
      for await (const key of store.keys()) {
        if (this.stopped) return;
        if (this.backupJobs.get(key)) continue;
        this.pump.touch(key);
        stale++;
      }
      this.log.info('swept snapshots of BackupJobs that are gone', { snapshots: stale });
    } catch (err) {
      // Left for the next term; a stale snapshot only costs its Redis memory meanwhile.
      this.log.warn('could not sweep stale snapshots', { ...errorFields(err) });
    }
  }

  /** The Job's BackupJob: the full name annotation first, since a long name's label is shortened. */
  private ownerOfJob(job: KubeObject): string | undefined {
    const fullName = job.metadata.annotations?.[ANNOTATION_OWNER_NAME];
    if (fullName) return `${job.metadata.namespace ?? ''}/${fullName}`;
    return backupJobKeyOfJob(job, (ns, name) => this.cronJobs.get(`${ns}/${name}`));
  }

  private informers(): Informer[] {
    return [this.backupJobs, this.cronJobs, this.jobs];
  }

  private forObject(
    passes: (old: KubeObject, obj: KubeObject) => boolean,
  ): EventHandler<KubeObject> {
    return {
      onAdd: (obj, initial) =>
        initial ? this.enqueueLow(objectKey(obj)) : this.enqueue(objectKey(obj)),
      onUpdate: (old, obj) => {
        if (!resourceVersionChanged(old, obj)) this.recheck(objectKey(obj));
        else if (passes(old, obj)) this.enqueue(objectKey(obj));
        else this.settle(objectKey(obj));
      },
      onDelete: (obj) => this.enqueue(objectKey(obj)),
    };
  }

  private forOwner(
    ownerKey: (obj: KubeObject) => string | undefined,
    passes: UpdatePredicate = () => true,
    addPasses: AddPredicate = () => true,
  ): EventHandler<KubeObject> {
    const toOwner = (obj: KubeObject, how: 'normal' | 'low' | 'settle') => {
      const key = ownerKey(obj);
      if (key === undefined || !splitKey(key).name) return;
      if (how === 'normal') this.enqueue(key);
      else if (how === 'low') this.enqueueLow(key);
      else this.settle(key);
    };
    return {
      onAdd: (obj, initial) => toOwner(obj, initial ? 'low' : addPasses(obj) ? 'normal' : 'settle'),
      onUpdate: (old, obj) => {
        if (!resourceVersionChanged(old, obj)) return;
        // An owner that changed (adoption, orphaning) concerns both owners.
        const how = passes(old, obj) ? 'normal' : 'settle';
        toOwner(old, how);
        toOwner(obj, how);
      },
      onDelete: (obj) => toOwner(obj, 'normal'),
    };
  }

  private settle(key: string): void {
    if (!this.stopped) this.pump.settle(key);
  }

  private enqueue(key: string): void {
    if (!this.stopped) this.pump.add(key);
  }

  private enqueueLow(key: string): void {
    if (!this.stopped) this.pump.addLow(key);
  }

  private recheck(key: string): void {
    if (!this.stopped) this.pump.recheck(key);
  }
}
