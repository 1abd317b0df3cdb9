import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import type { BackupJob } from '#api';
import type { Action } from './actions.js';
import type { ReconcilerConfig } from './config.js';
import type { SecretAccess } from './permitted.js';
import type { Result } from './result.js';

/** The world one reconcile looks at, read by the controller just before. */
export interface ReconcileInput {
  /** undefined when the BackupJob is gone. */
  readonly backupJob: BackupJob | undefined;
  /** The CronJob of the desired name, whoever owns it. */
  readonly cronJob: V1CronJob | undefined;
  /** The Jobs labelled for this BackupJob: those the CronJob started and cleanup Jobs. */
  readonly jobs: readonly V1Job[];
  /** Whether spec.secretRef's Secret is opted in; undefined (not asked) counts as not. */
  readonly secretAccess?: SecretAccess;
  readonly now: Date;
  readonly config: ReconcilerConfig;
}

export interface ReconcileOutput {
  readonly actions: readonly Action[];
  readonly result: Result;
}
