import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import type { BackupJob } from '#api';
import {
  BACKUP_OVERDUE,
  BACKUP_SUCCEEDED,
  findCondition,
  type ConditionInput,
} from './conditions.js';
import { finishedNewestFirst, isCleanupJob, jobOutcome, toDate, type JobOutcome } from './jobs.js';
import { scheduleTimes } from './schedule.js';
import type { StatusDraft } from './status.js';
import type { ValidSchedule } from './validate.js';

function later(a: Date | undefined, b: string | undefined): string | undefined {
  const other = toDate(b);
  if (!a) return other?.toISOString();
  return !other || a > other ? a.toISOString() : other.toISOString();
}

/**
 * Folds what the CronJob's Jobs show into the status: the newest finished Job decides
 * BackupSucceeded; times only ever move forward, because the CronJob prunes old Jobs.
 */
export function observeBackups(
  draft: StatusDraft,
  cronJob: V1CronJob | undefined,
  jobs: readonly V1Job[],
): void {
  const finished = finishedNewestFirst(jobs.filter((job) => !isCleanupJob(job)).map(jobOutcome));
  const newestSuccess = finished.find((o) => o.state === 'succeeded');
  const newestFailure = finished.find((o) => o.state === 'failed');
  const status = draft.current;
  draft.set({
    lastBackupTime: later(newestSuccess?.finishedAt, status.lastBackupTime),
    lastFailureTime: later(newestFailure?.finishedAt, status.lastFailureTime),
    lastScheduleTime: later(toDate(cronJob?.status?.lastScheduleTime), status.lastScheduleTime),
  });
  const newest = finished[0];
  if (newest) {
    // Success is the normal case and says nothing new; each failure is worth a Warning.
    const failed = newest.state === 'failed';
    draft.condition(
      backupCondition(newest),
      failed ? { type: 'Warning', reason: 'BackupFailed', action: 'Backup' } : undefined,
    );
  } else if (!findCondition(status.conditions, BACKUP_SUCCEEDED)) {
    draft.condition({
      type: BACKUP_SUCCEEDED,
      status: 'Unknown',
      reason: 'NoBackupYet',
      message: 'no backup has finished yet',
    });
  }
}

function backupCondition(newest: JobOutcome): ConditionInput {
  if (newest.state === 'succeeded') {
    return {
      type: BACKUP_SUCCEEDED,
      status: 'True',
      reason: 'BackupCompleted',
      message: `backup Job ${newest.name} completed at ${newest.finishedAt?.toISOString()}`,
    };
  }
  return {
    type: BACKUP_SUCCEEDED,
    status: 'False',
    reason: newest.reason,
    message: `backup Job ${newest.name} failed: ${newest.message}`,
  };
}

const AWAITING = 'AwaitingSchedule';

/**
 * BackupOverdue: no successful backup since the latest scheduled time whose grace period has
 * passed. Scheduled times from before the BackupJob existed, or from before backups were
 * resumed, never count: the resume time is remembered as the lastTransitionTime of the Unknown
 * AwaitingSchedule state (entered from Suspended), so no extra status field is needed.
 * Returns the delay until the answer can next change by time alone, or undefined.
 */
export function observeOverdue(
  draft: StatusDraft,
  backupJob: BackupJob,
  schedule: ValidSchedule,
  suspended: boolean,
  graceMs: number,
  now: Date,
): number | undefined {
  const existing = findCondition(draft.current.conditions, BACKUP_OVERDUE);
  if (suspended) {
    draft.condition({
      type: BACKUP_OVERDUE,
      status: 'False',
      reason: 'Suspended',
      message: 'backups are suspended',
    });
    return undefined;
  }
  const created = toDate(backupJob.metadata.creationTimestamp)?.getTime() ?? 0;
  const resumedAt =
    existing?.reason === AWAITING ? (toDate(existing.lastTransitionTime)?.getTime() ?? 0) : 0;
  const since = existing?.reason === 'Suspended' ? now.getTime() : Math.max(created, resumedAt);
  const times = scheduleTimes(
    schedule.expression,
    schedule.timeZone,
    new Date(now.getTime() - graceMs),
  );
  if ('problem' in times) return undefined;
  const condition = overdueCondition(times.previous, since, draft.current.lastBackupTime);
  const warn = condition.status === 'True';
  draft.condition(
    condition,
    warn ? { type: 'Warning', reason: 'BackupOverdue', action: 'Backup' } : undefined,
  );
  return times.next ? times.next.getTime() + graceMs - now.getTime() : undefined;
}

function overdueCondition(
  due: Date | undefined,
  since: number,
  lastBackupTime: string | undefined,
): ConditionInput {
  if (!due || due.getTime() < since) {
    return {
      type: BACKUP_OVERDUE,
      status: 'Unknown',
      reason: AWAITING,
      message: 'no scheduled backup has been due yet',
    };
  }
  const last = toDate(lastBackupTime);
  if (!last || last < due) {
    return {
      type: BACKUP_OVERDUE,
      status: 'True',
      reason: 'MissedSchedule',
      message: `no successful backup since the run scheduled at ${due.toISOString()}`,
    };
  }
  return {
    type: BACKUP_OVERDUE,
    status: 'False',
    reason: 'OnSchedule',
    message: `the backup scheduled at ${due.toISOString()} succeeded`,
  };
}
