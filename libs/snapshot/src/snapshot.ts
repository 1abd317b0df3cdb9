import type { KubeObject } from '#kube';

/**
 * What one reconcile of a BackupJob reads, as the watcher's informers last saw it: the object,
 * the CronJob of its name and the Jobs made for it, trimmed by the cache transforms and without
 * managedFields. A BackupJob that is gone has no snapshot.
 */
export interface WorldSnapshot {
  readonly backupJob: KubeObject;
  readonly cronJob?: KubeObject;
  readonly jobs: readonly KubeObject[];
}

/** Where the watcher keeps snapshots, one per BackupJob key. */
export interface SnapshotStore {
  /**
   * Replaces each key's snapshot; `undefined` deletes it. With a leader `term`, writes are refused
   * (the promise rejects) once a newer term has written: a deposed leader's late writes never
   * overwrite its successor's.
   */
  write(
    entries: readonly (readonly [key: string, snapshot: WorldSnapshot | undefined])[],
    term?: number,
  ): Promise<void>;
  /** Every key that has a snapshot, e.g. to find those of BackupJobs deleted while no one watched. */
  keys(): AsyncIterable<string>;
}

/** What a worker needs of the store. */
export interface SnapshotReader {
  read(key: string): Promise<WorldSnapshot | undefined>;
}

/** The queue a store's snapshots sit beside: its prefix, name and shard count. */
export interface SnapshotLocation {
  readonly prefix?: string;
  readonly name: string;
  readonly shards?: number;
}
