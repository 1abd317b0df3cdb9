import type { BackupJob } from '#api';
import type { Action, EventSpec } from './actions.js';
import { READY, findCondition } from './conditions.js';
import { requeueAfter, type Result } from './result.js';
import { StatusDraft, statusActions } from './status.js';

/** How the controller sorted a failed API call (see libs/controller api-error.ts). */
export type FailureKind = 'conflict' | 'notFound' | 'forbidden' | 'invalid' | 'transient';

/**
 * The step of a run that failed: one of the reconciler's writes, reading the world from the
 * API server, or asking whether the spec's Secret is opted in.
 */
export type FailedStep = Action['type'] | 'read' | 'reviewGrants';

/** The permission a 403 names. */
export interface Permission {
  readonly verb: string;
  readonly resource: string;
  readonly group: string;
  readonly namespace: string | undefined;
}

/** One failed API call of a run, as the controller saw it. */
export interface ReconcileFailure {
  readonly kind: FailureKind;
  readonly step: FailedStep;
  /** The object the failed write was about (a CronJob or Job name), when not the BackupJob. */
  readonly object?: string;
  /** HTTP status; undefined when no answer came (timeout, network). */
  readonly code: number | undefined;
  /** The API Status reason (InternalError, Conflict, Invalid …) or the client error's name. */
  readonly apiReason: string;
  /** The API error's message, as the server wrote it. */
  readonly message: string;
  /** Retry-After in ms, when the server sent one. */
  readonly retryAfterMs?: number;
  /** For a 403 whose message names it. */
  readonly permission?: Permission;
}

export interface FailureInput {
  /**
   * The BackupJob as the run last knew it (after its own successful writes), undefined when it
   * was never read.
   */
  readonly backupJob: BackupJob | undefined;
  readonly failure: ReconcileFailure;
  /** Consecutive failures of the key before this run (the queue's NumRequeues). */
  readonly failures: number;
  readonly now: Date;
}

/** What to do about a failed run: report it (best effort), then retry as `result` says. */
export interface FailureOutput {
  /** Status and Event writes that tell the user; empty while the failure is not reported. */
  readonly actions: readonly Action[];
  /** `error` backs off (the failure count grows); `requeueAfter` honours a Retry-After. */
  readonly result: Result;
  readonly reported: boolean;
}

/** The Ready reason a reported failure shows, by kind. */
export const FAILURE_REASONS: Readonly<Record<FailureKind, string>> = {
  forbidden: 'Forbidden',
  invalid: 'RequestInvalid',
  conflict: 'Conflict',
  notFound: 'Conflict',
  transient: 'APIServerError',
};

/**
 * From which consecutive failure on a kind is reported. A 403 or a 400/422 answers the same
 * request the same way every time: at once. A 5xx, a timeout or a dropped connection is often a
 * blip: from the third failure in a row (with the default 5 ms backoff, 15 ms after the first).
 * A 409 (or a 404 on a write) is the optimistic concurrency working: a write computed from a
 * stale read, which the retry on a newer read fixes; only one that persists through ten retries
 * (about 2.5 s after the first with the default backoff) says something else is wrong.
 */
export const REPORT_FROM_FAILURE: Readonly<Record<FailureKind, number>> = {
  forbidden: 1,
  invalid: 1,
  transient: 3,
  conflict: 10,
  notFound: 10,
};

/**
 * The reconciler's answer to a failed run: whether and how to tell the user, and how to retry.
 *
 * A reported failure sets Ready=False with the failure's reason and message, leaves
 * status.observedGeneration alone (that generation was not reconciled) and records a Warning
 * Event each time, which the Event recorder folds into one series. The status is written only
 * when the reported reason or message differs from what Ready already says, so a failure that
 * persists costs one status write however often it is retried, and the watch event that write
 * causes runs the key at most once more. When the failing write is the status patch itself,
 * writing status to say so would fail the same way: the Event alone says it.
 *
 * Every failure backs off, so the delay keeps growing while the failure lasts, except an answer
 * with Retry-After, which is retried when the server asked (not counted as a failure).
 */
export function onFailure(input: FailureInput): FailureOutput {
  const { failure, backupJob } = input;
  const result: Result =
    failure.retryAfterMs !== undefined
      ? requeueAfter(failure.retryAfterMs)
      : { kind: 'error', error: new Error(`${failure.apiReason}: ${failure.message}`) };
  const reported =
    failure.retryAfterMs === undefined &&
    backupJob !== undefined &&
    input.failures + 1 >= REPORT_FROM_FAILURE[failure.kind];
  if (!reported) return { actions: [], result, reported: false };
  return { actions: reportActions(backupJob, failure, input.now), result, reported: true };
}

function reportActions(backupJob: BackupJob, failure: ReconcileFailure, now: Date): Action[] {
  const reason = FAILURE_REASONS[failure.kind];
  const message = failureMessage(failure);
  const event: Action = { type: 'emitEvent', event: failureEvent(failure, reason, message) };
  if (failure.step === 'updateStatus') return [event];
  const ready = findCondition(backupJob.status?.conditions, READY);
  if (ready?.status === 'False' && ready.reason === reason && ready.message === message) {
    return [event];
  }
  const draft = new StatusDraft(backupJob, now, { observed: false });
  draft.condition({ type: READY, status: 'False', reason, message });
  draft.set({ ready: false, message });
  return [...statusActions(draft), event];
}

/** What a person reads in Ready's message and the Event: the step, and the API's own words. */
export function failureMessage(failure: ReconcileFailure): string {
  if (failure.kind === 'forbidden' && failure.permission) {
    const { verb, resource, group, namespace } = failure.permission;
    const where = namespace ? ` in namespace ${namespace}` : '';
    return `the operator may not ${verb} ${resource}${group ? `.${group}` : ''}${where}`;
  }
  const answer = failure.code === undefined ? '' : ` with ${failure.code} ${failure.apiReason}`;
  const cause = failure.code === undefined ? `${failure.apiReason}: ` : '';
  return `${describeStep(failure)} failed${answer}: ${cause}${failure.message}`;
}

function describeStep({ step, object }: ReconcileFailure): string {
  switch (step) {
    case 'addFinalizer':
      return 'adding the finalizer';
    case 'removeFinalizer':
      return 'removing the finalizer';
    case 'createCronJob':
      return `creating CronJob ${object}`;
    case 'patchCronJob':
      return `updating CronJob ${object}`;
    case 'deleteCronJob':
      return `deleting CronJob ${object}`;
    case 'createJob':
      return `creating Job ${object}`;
    case 'deleteJob':
      return `deleting Job ${object}`;
    case 'updateStatus':
      return 'writing status';
    case 'emitEvent':
      return 'recording an Event';
    case 'read':
      return 'reading the BackupJob and its children';
    case 'reviewGrants':
      return `checking whether the namespace opted in ${object}`;
  }
}

const EVENT_ACTIONS: Readonly<Record<FailedStep, string>> = {
  addFinalizer: 'AddFinalizer',
  removeFinalizer: 'RemoveFinalizer',
  createCronJob: 'Create',
  patchCronJob: 'Update',
  deleteCronJob: 'Delete',
  createJob: 'Create',
  deleteJob: 'Delete',
  updateStatus: 'UpdateStatus',
  emitEvent: 'Record',
  read: 'Read',
  reviewGrants: 'Review',
};

function failureEvent(failure: ReconcileFailure, reason: string, note: string): EventSpec {
  const kind = /CronJob$/.test(failure.step) ? 'CronJob' : /Job$/.test(failure.step) ? 'Job' : '';
  const related =
    kind && failure.object ? { apiVersion: 'batch/v1', kind, name: failure.object } : undefined;
  return {
    type: 'Warning',
    reason,
    action: EVENT_ACTIONS[failure.step],
    note,
    ...(related && { related }),
  };
}
