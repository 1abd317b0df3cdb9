import type { V1Job } from '@kubernetes/client-node';
import { COMPONENT_CLEANUP, LABEL_CLEANUP_ATTEMPT, LABEL_COMPONENT } from '#api';

/** client-node deserializes timestamps into Date; plain JSON carries strings. */
export type Timestamp = Date | string | undefined | null;

export function toDate(value: Timestamp): Date | undefined {
  if (value === undefined || value === null) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A Job as the reconciler sees it: how it ended (if it did), when, and why. */
export interface JobOutcome {
  readonly name: string;
  readonly state: 'active' | 'succeeded' | 'failed';
  /** When it finished; undefined while active. */
  readonly finishedAt: Date | undefined;
  readonly reason: string;
  readonly message: string;
  readonly deleting: boolean;
}

function trueCondition(job: V1Job, type: string) {
  return job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
}

export function jobOutcome(job: V1Job): JobOutcome {
  const name = job.metadata?.name ?? '';
  const deleting = Boolean(job.metadata?.deletionTimestamp);
  const failed = trueCondition(job, 'Failed');
  if (failed) {
    return {
      name,
      state: 'failed',
      finishedAt: toDate(failed.lastTransitionTime) ?? toDate(job.status?.startTime),
      reason: failed.reason || 'Failed',
      message: failed.message || 'the Job failed',
      deleting,
    };
  }
  const complete = trueCondition(job, 'Complete');
  if (complete) {
    return {
      name,
      state: 'succeeded',
      finishedAt: toDate(job.status?.completionTime) ?? toDate(complete.lastTransitionTime),
      reason: complete.reason || 'Completed',
      message: complete.message || 'the Job completed',
      deleting,
    };
  }
  return { name, state: 'active', finishedAt: undefined, reason: '', message: '', deleting };
}

export function isCleanupJob(job: V1Job): boolean {
  return job.metadata?.labels?.[LABEL_COMPONENT] === COMPONENT_CLEANUP;
}

export function cleanupAttempt(job: V1Job): number {
  const value = Number(job.metadata?.labels?.[LABEL_CLEANUP_ATTEMPT]);
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}

/** Finished Jobs newest first; ties broken by name so the order never depends on list order. */
export function finishedNewestFirst(outcomes: readonly JobOutcome[]): JobOutcome[] {
  return outcomes
    .filter((o) => o.finishedAt !== undefined)
    .sort(
      (a, b) =>
        (b.finishedAt as Date).getTime() - (a.finishedAt as Date).getTime() ||
        b.name.localeCompare(a.name),
    );
}
