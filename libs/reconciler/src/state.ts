import type { BackupJob } from '#api';
import { BACKUP_OVERDUE, BACKUP_SUCCEEDED, READY, findCondition } from './conditions.js';
import type { ReconcilerConfig } from './config.js';
import { toDate } from './jobs.js';
import { scheduleTimes } from './schedule.js';
import { soundStatus, specProblems } from './shape.js';
import { effectiveSpec } from './spec.js';
import { validateSpec } from './validate.js';

export type BackupResult = 'succeeded' | 'failed' | 'unknown';
export const BACKUP_RESULTS: readonly BackupResult[] = ['succeeded', 'failed', 'unknown'];

/** What a BackupJob says about itself, as monitoring reads it (kube-state-metrics style). */
export interface BackupJobState {
  readonly namespace: string;
  readonly name: string;
  /** The Ready condition is True. */
  readonly ready: boolean;
  /** status.lastBackupTime. */
  readonly lastSuccessfulBackup: Date | undefined;
  /** The BackupSucceeded condition: True, False, or not known yet. */
  readonly lastBackupResult: BackupResult;
  /** The BackupOverdue condition is True. */
  readonly overdue: boolean;
  /** The next time the schedule fires; undefined when suspended or the spec is not valid. */
  readonly nextScheduledRun: Date | undefined;
}

/**
 * The monitoring view of one BackupJob from its object alone: the status as the operator last
 * wrote it, and the next run computed from the spec by the reconciler's own schedule code, so
 * the metric and the CronJob agree on time zones and @-macros.
 */
export function backupJobState(
  backupJob: BackupJob,
  now: Date,
  config: ReconcilerConfig,
): BackupJobState {
  const status = soundStatus(backupJob.status);
  const conditions = status.conditions;
  const succeeded = findCondition(conditions, BACKUP_SUCCEEDED)?.status;
  return {
    namespace: backupJob.metadata.namespace ?? '',
    name: backupJob.metadata.name ?? '',
    ready: findCondition(conditions, READY)?.status === 'True',
    lastSuccessfulBackup: toDate(status.lastBackupTime),
    lastBackupResult:
      succeeded === 'True' ? 'succeeded' : succeeded === 'False' ? 'failed' : 'unknown',
    overdue: findCondition(conditions, BACKUP_OVERDUE)?.status === 'True',
    nextScheduledRun: nextRun(backupJob, now, config),
  };
}

function nextRun(backupJob: BackupJob, now: Date, config: ReconcilerConfig): Date | undefined {
  if (specProblems(backupJob.spec).length > 0) return undefined;
  const spec = effectiveSpec(backupJob, config);
  if (spec.suspend) return undefined;
  const validation = validateSpec(spec, now, config);
  if (!validation.valid) return undefined;
  const { expression, timeZone } = validation.schedule;
  const times = scheduleTimes(expression, timeZone, now);
  return 'problem' in times ? undefined : times.next;
}
