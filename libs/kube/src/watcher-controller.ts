import { MANAGED_BY_VALUE, LABEL_MANAGED_BY } from '../../api/src/index.js';
import type { BackoffOptions } from './backoff.js';
import { backupJobKeyOfCronJob, backupJobKeyOfJob } from './handler.js';
import { Informer, type EventHandler } from './informer.js';
import { KeyPump, type KeySink } from './key-pump.js';
import { silentLog, type Log } from './log.js';
import {
  backupJobUpdatePredicate,
  cronJobUpdatePredicate,
  resourceVersionChanged,
  type UpdatePredicate,
} from './predicate.js';
import { BACKUPJOBS, CRONJOBS, JOBS } from './resource.js';
import type { RestClient } from './rest.js';
import {
  stripToOwnership,
  stripToOwnershipAndWriters,
  stripToPredicateFields,
} from './transform.js';
import { objectKey, splitKey, type KubeObject } from './types.js';

export interface WatcherControllerOptions {
  readonly rest: RestClient;
  readonly queue: KeySink;
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
  readonly watchTimeoutSeconds?: () => number;
  readonly backoff?: BackoffOptions;
  /** Ask the server for PartialObjectMetadata (default true: the watcher reads only metadata). */
  readonly metadataOnly?: boolean;
  readonly log?: Log;
}

/** Children the operator made carry this label; their informers select on it. */
export const CHILD_SELECTOR = `${LABEL_MANAGED_BY}=${MANAGED_BY_VALUE}`;

/**
 * The watcher's controller (controller-runtime's For(BackupJob).Owns(CronJob).Owns(Job)): turns
 * every relevant change into the owning BackupJob's `namespace/name` key. Initial lists, relists
 * of unchanged objects and resyncs go at low priority; real changes at normal priority.
 * Runs only while leading: create one per leadership term, stop it when the term ends.
 */
export class WatcherController {
  readonly backupJobs: Informer;
  readonly cronJobs: Informer;
  readonly jobs: Informer;
  private readonly pump: KeyPump;
  private readonly log: Log;
  private stopped = false;

  constructor(options: WatcherControllerOptions) {
    this.log = options.log ?? silentLog;
    this.pump = new KeyPump({ sink: options.queue, log: this.log });
    const common = {
      rest: options.rest,
      namespaces: options.namespaces,
      resyncPeriodMs: options.resyncPeriodMs,
      watchdogMs: options.watchdogMs,
      pageSize: options.pageSize,
      watchTimeoutSeconds: options.watchTimeoutSeconds,
      backoff: options.backoff,
      metadataOnly: options.metadataOnly ?? true,
      log: this.log,
    };
    this.backupJobs = new Informer({
      ...common,
      resource: BACKUPJOBS,
      transform: stripToPredicateFields,
    });
    // Children: a resync of theirs adds nothing the BackupJobs' own resync does not.
    const childCommon = { ...common, labelSelector: CHILD_SELECTOR, resyncPeriodMs: 0 };
    this.cronJobs = new Informer({
      ...childCommon,
      resource: CRONJOBS,
      transform: stripToOwnershipAndWriters,
    });
    this.jobs = new Informer({ ...childCommon, resource: JOBS, transform: stripToOwnership });

    const fieldManager = options.fieldManager ?? MANAGED_BY_VALUE;
    this.backupJobs.addEventHandler(this.forObject(backupJobUpdatePredicate(fieldManager)));
    this.cronJobs.addEventHandler(
      this.forOwner(backupJobKeyOfCronJob, cronJobUpdatePredicate(fieldManager)),
    );
    this.jobs.addEventHandler(
      this.forOwner((job) =>
        backupJobKeyOfJob(job, (ns, name) => this.cronJobs.get(`${ns}/${name}`)),
      ),
    );
  }

  start(): void {
    this.pump.start();
    for (const informer of this.informers()) informer.start();
  }

  /** Stops enqueueing at once, then the watches. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pump.stop();
    await Promise.all(this.informers().map((i) => i.stop()));
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

  /** Re-adds every known BackupJob key at low priority, e.g. when the queue lost its data. */
  reAddAll(): number {
    let count = 0;
    for (const key of this.backupJobs.keys()) {
      this.enqueueLow(key);
      count++;
    }
    this.log.info('re-added every key', { keys: count });
    return count;
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
        if (!resourceVersionChanged(old, obj)) this.enqueueLow(objectKey(obj));
        else if (passes(old, obj)) this.enqueue(objectKey(obj));
      },
      onDelete: (obj) => this.enqueue(objectKey(obj)),
    };
  }

  private forOwner(
    ownerKey: (obj: KubeObject) => string | undefined,
    passes: UpdatePredicate = () => true,
  ): EventHandler<KubeObject> {
    const enqueueOwner = (obj: KubeObject, low: boolean) => {
      const key = ownerKey(obj);
      if (key === undefined || !splitKey(key).name) return;
      if (low) this.enqueueLow(key);
      else this.enqueue(key);
    };
    return {
      onAdd: (obj, initial) => enqueueOwner(obj, initial),
      onUpdate: (old, obj) => {
        if (!resourceVersionChanged(old, obj) || !passes(old, obj)) return;
        // An owner that changed (adoption, orphaning) concerns both owners.
        enqueueOwner(old, false);
        enqueueOwner(obj, false);
      },
      onDelete: (obj) => enqueueOwner(obj, false),
    };
  }

  private enqueue(key: string): void {
    if (!this.stopped) this.pump.add(key);
  }

  private enqueueLow(key: string): void {
    if (!this.stopped) this.pump.addLow(key);
  }
}
