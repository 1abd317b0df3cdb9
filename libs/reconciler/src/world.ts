import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import type { BackupJob } from '#api';
import type { Action } from './actions.js';
import type { ReconcilerConfig } from './config.js';
import type { Grant } from './permitted.js';
import type { Result } from './result.js';

/** The world one reconcile looks at, read by the controller just before. */
export interface ReconcileInput {
  /** undefined when the BackupJob is gone. */
  readonly backupJob: BackupJob | undefined;
  /** The CronJob of the desired name, whoever owns it. */
  readonly cronJob: V1CronJob | undefined;
  /** The Jobs labelled for this BackupJob: those the CronJob started and cleanup Jobs. */
  readonly jobs: readonly V1Job[];
  /**
   * Whether the namespace opted in each object the spec names (referencedObjects: the Secret and
   * the claim), as the controller learned it just before; an object without an answer counts as
   * not opted in.
   */
  readonly grants?: readonly Grant[];
  readonly now: Date;
  readonly config: ReconcilerConfig;
}

export interface ReconcileOutput {
  readonly actions: readonly Action[];
  readonly result: Result;
}
