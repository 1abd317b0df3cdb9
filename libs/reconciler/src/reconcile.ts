import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import { ANNOTATION_OWNER_NAME, type BackupJob } from '#api';
import type { Action } from './actions.js';
import { overdueGraceMs } from './config.js';
import { READY } from './conditions.js';
import { desiredCronJob } from './desired.js';
import { finalize } from './finalize.js';
import { observeBackups, observeOverdue } from './observe.js';
import { hasFinalizer, isControlledBy } from './ownership.js';
import { ownedFieldDiff, ownedFieldsPatch } from './owned.js';
import { withholdActions } from './withhold.js';
import { borrows, grantRecheckDelay, permittedMounts, podRefusals } from './permitted.js';
import { done, requeueAfter, sooner, terminal, type Result } from './result.js';
import { specProblems } from './shape.js';
import { effectiveSpec, type EffectiveSpec } from './spec.js';
import { StatusDraft, notReady, statusActions } from './status.js';
import { validateSpec } from './validate.js';
import type { ReconcileInput, ReconcileOutput } from './world.js';

/**
 * The BackupJob reconciler as a pure function: the same world gives the same actions, and a
 * converged world gives none. The steps follow the design: gone, deleting, finalizer, validate,
 * CronJob, observe, status, requeue.
 */
export function reconcile(input: ReconcileInput): ReconcileOutput {
  const { backupJob, config } = input;
  if (!backupJob) return { actions: [], result: done };
  const own = { ...input, backupJob, jobs: input.jobs.filter((j) => madeFor(j, backupJob)) };
  const problems = specProblems(backupJob.spec);
  if (backupJob.metadata.deletionTimestamp) {
    // Nothing can be cleaned up safely from a spec that cannot be read: the backups are kept.
    if (problems.length > 0 && hasFinalizer(backupJob)) {
      return { actions: [{ type: 'removeFinalizer' }], result: done };
    }
    return finalize(own);
  }
  const actions: Action[] = hasFinalizer(backupJob) ? [] : [{ type: 'addFinalizer' }];
  const draft = new StatusDraft(backupJob, input.now);
  if (problems.length > 0) {
    // Written under an older or looser CRD: reported like any invalid spec, never read as typed.
    notReady(draft, 'InvalidSpec', problems.slice(0, 10).join('; '), 'Validate');
    const result = terminal(`invalid spec: ${problems.length} problem(s)`);
    return { actions: [...actions, ...statusActions(draft)], result };
  }
  const spec = effectiveSpec(backupJob, config);
  const result = reconcileChildren(own, backupJob, spec, draft, actions);
  return { actions: [...actions, ...statusActions(draft)], result };
}

/**
 * Whether a Job found by the owner label is this BackupJob's: a shortened label value could be
 * shared by two long names, the annotation with the full name tells them apart.
 */
function madeFor(job: V1Job, backupJob: BackupJob): boolean {
  const owner = job.metadata?.annotations?.[ANNOTATION_OWNER_NAME];
  return owner === undefined || owner === backupJob.metadata.name;
}

function reconcileChildren(
  input: ReconcileInput,
  backupJob: BackupJob,
  spec: EffectiveSpec,
  draft: StatusDraft,
  actions: Action[],
): Result {
  const { cronJob, config, now } = input;
  const validation = validateSpec(spec, now, config);
  if (!validation.valid) {
    notReady(draft, 'InvalidSpec', validation.message, 'Validate');
    return terminal(`invalid spec: ${validation.message}`);
  }
  // Before anything is computed from the spec, so a refused spec never reaches the CronJob.
  const refused = refuse(input, backupJob, spec, draft, actions);
  if (refused) return refused;
  const desired = desiredCronJob(backupJob, spec, config);
  const name = desired.metadata?.name as string;
  draft.set({ cronJobName: name });
  if (cronJob && !isControlledBy(cronJob, backupJob)) {
    const message = `CronJob ${name} exists and is not controlled by this BackupJob; it is left untouched`;
    notReady(draft, 'CronJobConflict', message, 'Create');
    return requeueAfter(config.conflictRequeueMs);
  }
  // A CronJob on its way out cannot be updated; it is made again once it is gone.
  if (cronJob?.metadata?.deletionTimestamp) return requeueAfter(config.cleanupPollMs);
  actions.push(...cronJobActions(desired, cronJob));
  const ready = spec.suspend
    ? { reason: 'Suspended', message: `CronJob ${name} is suspended; no backups are scheduled` }
    : { reason: 'CronJobReady', message: `CronJob ${name} matches the spec` };
  draft.condition({ type: READY, status: 'True', ...ready });
  draft.set({ ready: true });
  observeBackups(draft, cronJob, input.jobs);
  const grace = overdueGraceMs(config);
  const delay = observeOverdue(draft, backupJob, validation.schedule, spec.suspend, grace, now);
  draft.set({ message: summary(draft, ready.message) });
  const result = delay === undefined ? done : requeueAfter(Math.min(delay, config.maxRequeueMs));
  // A grant can be withdrawn, and the image list narrowed, without any event the watcher sees:
  // look again while the pod uses either.
  if (!borrows(spec, config)) return result;
  return sooner(result, requeueAfter(grantRecheckDelay(backupJob.metadata.uid ?? '', config)));
}

/**
 * Reports why the operator will not make a pod for this spec, if it will not, and withholds the
 * CronJob it made before: suspended and without a Secret or claim not opted in now, so that a
 * withdrawn grant, or a narrowed image list, stops the next backup rather than only new CronJobs.
 */
function refuse(
  input: ReconcileInput,
  backupJob: BackupJob,
  spec: EffectiveSpec,
  draft: StatusDraft,
  actions: Action[],
): Result | undefined {
  const { cronJob, config } = input;
  const grants = input.grants ?? [];
  const refusals = podRefusals(spec, backupJob.metadata.namespace ?? '', config, grants);
  const [first] = refusals;
  if (!first) return undefined;
  let message = refusals.map((r) => r.message).join('; ');
  const ours =
    cronJob && isControlledBy(cronJob, backupJob) && !cronJob.metadata?.deletionTimestamp;
  if (ours) {
    actions.push(...withholdActions(cronJob, permittedMounts(spec, grants), first));
    message += `; CronJob ${cronJob.metadata?.name} is suspended until then`;
  }
  notReady(draft, first.reason, message, 'Validate');
  // Neither a new grant nor a wider image list makes an event the watcher sees.
  return requeueAfter(config.refusedRecheckMs);
}

function cronJobActions(desired: V1CronJob, actual: V1CronJob | undefined): Action[] {
  const related = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    name: desired.metadata?.name as string,
  };
  if (!actual) {
    return [
      { type: 'createCronJob', cronJob: desired },
      {
        type: 'emitEvent',
        event: {
          type: 'Normal',
          reason: 'CronJobCreated',
          action: 'Create',
          note: `created CronJob ${related.name}`,
          related,
        },
      },
    ];
  }
  const fields = ownedFieldDiff(desired, actual);
  if (fields.length === 0) return [];
  return [
    { type: 'patchCronJob', name: related.name, patch: ownedFieldsPatch(desired, actual), fields },
    {
      type: 'emitEvent',
      event: {
        type: 'Normal',
        reason: 'CronJobUpdated',
        action: 'Update',
        note: `updated CronJob ${related.name}: ${fields.join(', ')}`,
        related,
      },
    },
  ];
}

/** The one line `kubectl get` readers see: the most pressing condition first. */
function summary(draft: StatusDraft, readyMessage: string): string {
  const conditions = draft.current.conditions ?? [];
  const overdue = conditions.find((c) => c.type === 'BackupOverdue' && c.status === 'True');
  const failed = conditions.find((c) => c.type === 'BackupSucceeded' && c.status === 'False');
  const pressing = overdue ?? failed;
  if (pressing) return pressing.message;
  const last = draft.current.lastBackupTime;
  return last ? `last backup succeeded at ${last}` : readyMessage;
}
