import type { V1Job } from '@kubernetes/client-node';
import type { BackupJob } from '#api';
import type { Action, EventSpec } from './actions.js';
import type { ReconcilerConfig } from './config.js';
import { CLEANUP_SUCCEEDED, READY, findCondition, type ConditionInput } from './conditions.js';
import { desiredCleanupJob } from './desired.js';
import { cleanupAttempt, isCleanupJob, jobOutcome, type JobOutcome } from './jobs.js';
import { hasFinalizer, isControlledBy } from './ownership.js';
import { podRefusals } from './permitted.js';
import type { ReconcileInput, ReconcileOutput } from './world.js';
import { done, requeueAfter, type Result } from './result.js';
import { effectiveSpec, type EffectiveSpec } from './spec.js';
import { StatusDraft, notReady, statusActions } from './status.js';

type DeletingInput = ReconcileInput & { readonly backupJob: BackupJob };

/**
 * The finalizer's cleanup. Retain lets the object go at once. Delete stops new backups (the
 * CronJob and running backup Jobs are deleted), then runs cleanup Jobs until one succeeds,
 * numbering attempts so that every step can be interrupted and re-derived from the world alone.
 */
export function finalize(input: DeletingInput): ReconcileOutput {
  const { backupJob, config } = input;
  if (!hasFinalizer(backupJob)) return { actions: [], result: done };
  const spec = effectiveSpec(backupJob, config);
  if (spec.deletionPolicy === 'Retain') {
    return { actions: [{ type: 'removeFinalizer' }], result: done };
  }
  const draft = new StatusDraft(backupJob, input.now);
  draft.condition({
    type: READY,
    status: 'False',
    reason: 'Deleting',
    message: 'removing the stored backups before the BackupJob is deleted (deletionPolicy Delete)',
  });
  draft.set({ ready: false });
  const actions = stopBackups(input);
  const step = cleanupStep(input, spec, draft, actions.length > 0);
  actions.push(...step.actions);
  const finishing = step.removeFinalizer ? [{ type: 'removeFinalizer' } as const] : [];
  return { actions: [...actions, ...statusActions(draft), ...finishing], result: step.result };
}

/** Deletes the CronJob and any backup still running, so nothing writes while backups are removed. */
function stopBackups({ backupJob, cronJob, jobs }: DeletingInput): Action[] {
  const actions: Action[] = [];
  if (cronJob && isControlledBy(cronJob, backupJob) && !cronJob.metadata?.deletionTimestamp) {
    actions.push({
      type: 'deleteCronJob',
      name: cronJob.metadata?.name as string,
      uid: cronJob.metadata?.uid as string,
    });
  }
  for (const job of jobs) {
    if (isCleanupJob(job) || job.metadata?.deletionTimestamp) continue;
    if (jobOutcome(job).state === 'active') actions.push(deleteJob(job));
  }
  return actions;
}

function deleteJob(job: V1Job): Action {
  return {
    type: 'deleteJob',
    name: job.metadata?.name as string,
    uid: job.metadata?.uid as string,
  };
}

interface Step {
  readonly actions: Action[];
  readonly result: Result;
  readonly removeFinalizer: boolean;
}

function cleanupStep(
  input: DeletingInput,
  spec: EffectiveSpec,
  draft: StatusDraft,
  stopping: boolean,
): Step {
  const { backupJob, jobs, config, now } = input;
  const poll = requeueAfter(config.cleanupPollMs);
  const backupsRunning = jobs.some((j) => !isCleanupJob(j) && jobOutcome(j).state === 'active');
  if (stopping || backupsRunning) {
    progress(draft, 'WaitingForBackups', 'waiting for running backups to stop before cleanup');
    return { actions: [], result: poll, removeFinalizer: false };
  }
  const cleanups = jobs.filter(isCleanupJob);
  const live = cleanups
    .filter((j) => !j.metadata?.deletionTimestamp)
    .sort((a, b) => cleanupAttempt(b) - cleanupAttempt(a));
  const [newest, ...older] = live;
  const nextAttempt = Math.max(0, ...cleanups.map(cleanupAttempt)) + 1;
  const retire = older.map(deleteJob);
  const location = `${spec.claimName}/${spec.path}`;
  const running = (name: string) =>
    progress(
      draft,
      'CleanupRunning',
      `cleanup Job ${name} is removing the stored backups in ${location}`,
    );
  /** Creates the next attempt before retiring earlier ones, so an interruption loses nothing. */
  const start = (retired: readonly Action[]): Step => {
    // A cleanup pod runs the same image with the same Secret and claim as a backup: the same
    // checks hold.
    const namespace = backupJob.metadata.namespace ?? '';
    const refusals = podRefusals(spec, namespace, config, input.grants ?? []);
    const [first] = refusals;
    if (first) {
      const message = `cleanup cannot start: ${refusals.map((r) => r.message).join('; ')}`;
      notReady(draft, first.reason, message, 'Cleanup');
      return {
        actions: [...retired],
        result: requeueAfter(config.refusedRecheckMs),
        removeFinalizer: false,
      };
    }
    const job = desiredCleanupJob(backupJob, spec, nextAttempt, config);
    running(job.metadata?.name as string);
    return {
      actions: [...startCleanup(job, location), ...retired],
      result: poll,
      removeFinalizer: false,
    };
  };
  if (!newest) return start(retire);
  const outcome = jobOutcome(newest);
  if (outcome.state === 'active') {
    running(outcome.name);
    return { actions: retire, result: poll, removeFinalizer: false };
  }
  if (outcome.state === 'succeeded') {
    draft.condition(
      {
        type: CLEANUP_SUCCEEDED,
        status: 'True',
        reason: 'CleanupCompleted',
        message: `cleanup Job ${outcome.name} removed the stored backups in ${location}`,
      },
      { type: 'Normal', reason: 'CleanupSucceeded', action: 'Cleanup' },
    );
    draft.set({ message: 'stored backups removed' });
    return { actions: retire, result: done, removeFinalizer: true };
  }
  const retryAt = retryTime(outcome, cleanupAttempt(newest), config);
  recordFailure(draft, outcome, retryAt);
  if (now >= retryAt) return start([...retire, deleteJob(newest)]);
  return {
    actions: retire,
    result: requeueAfter(retryAt.getTime() - now.getTime()),
    removeFinalizer: false,
  };
}

function startCleanup(job: V1Job, location: string): Action[] {
  const related = { apiVersion: 'batch/v1', kind: 'Job', name: job.metadata?.name as string };
  // The note leaves out the attempt so that retries aggregate into one Event series.
  const note = `removing the stored backups in ${location}`;
  return [
    { type: 'createJob', job },
    {
      type: 'emitEvent',
      event: { type: 'Normal', reason: 'CleanupStarted', action: 'Cleanup', note, related },
    },
  ];
}

/** Exponential per attempt, like the queue's own backoff, measured from the failure time. */
function retryTime(outcome: JobOutcome, attempt: number, config: ReconcilerConfig): Date {
  const delay = Math.min(
    config.cleanupRetryBaseMs * 2 ** Math.max(0, attempt - 1),
    config.cleanupRetryMaxMs,
  );
  return new Date((outcome.finishedAt?.getTime() ?? 0) + delay);
}

/** A failure keeps the object Terminating; status and a Warning say why and when it retries. */
function recordFailure(draft: StatusDraft, outcome: JobOutcome, retryAt: Date): void {
  const event: EventSpec = {
    type: 'Warning',
    reason: 'CleanupFailed',
    action: 'Cleanup',
    note: `cleanup failed (${outcome.reason}): ${outcome.message}; retrying with backoff`,
  };
  const message = `cleanup Job ${outcome.name} failed (${outcome.reason}): ${outcome.message}; next attempt at ${retryAt.toISOString()}`;
  draft.condition(
    { type: CLEANUP_SUCCEEDED, status: 'False', reason: outcome.reason, message },
    event,
  );
  draft.set({ message });
}

/**
 * While cleanup runs the condition is Unknown, except after a failure: the failure's reason
 * stays visible until an attempt succeeds.
 */
function progress(draft: StatusDraft, reason: string, message: string): void {
  const existing = findCondition(draft.current.conditions, CLEANUP_SUCCEEDED);
  if (existing?.status === 'False') return;
  const input: ConditionInput = { type: CLEANUP_SUCCEEDED, status: 'Unknown', reason, message };
  draft.condition(input);
  draft.set({ message });
}
