import { FINALIZER, type BackupJob, type BackupJobStatus } from '#api';
import type { Action, FailedStep } from '#reconciler';
import type { Logger } from '#observability';
import { classify, isNotFound } from './api-error.js';
import type { KubeClients } from './clients.js';
import type { EventRecorder } from './event-recorder.js';

/**
 * A step of a run failed: which one, about which object, and the BackupJob as the run's own
 * writes left it (what a report of the failure must be written over).
 */
export class StepError extends Error {
  constructor(
    readonly step: FailedStep,
    override readonly cause: unknown,
    readonly backupJob: BackupJob | undefined,
    readonly object?: string,
  ) {
    super(`${step}: ${String((cause as Error | undefined)?.message ?? cause)}`, { cause });
    this.name = 'StepError';
  }
}

/** The child a write is about, named in the failure it may report. */
function objectOf(action: Action): string | undefined {
  switch (action.type) {
    case 'createCronJob':
      return action.cronJob.metadata?.name;
    case 'createJob':
      return action.job.metadata?.name;
    case 'patchCronJob':
    case 'deleteCronJob':
    case 'deleteJob':
      return action.name;
    default:
      return undefined;
  }
}

/**
 * Carries out the reconciler's actions in order, each with a precondition so that a decision
 * made on a stale read fails (409) instead of overwriting newer state: BackupJob patches carry
 * metadata.resourceVersion, and so do the merge patches of a CronJob's owned fields; deletes
 * carry the uid that was seen. The first failure stops the run; the next reconcile re-reads.
 *
 * The writes stay strictly in order, since each one's meaning depends on the one before: the
 * finalizer lands before any child exists, so no child is ever left without the cleanup that
 * removes it; the status (Ready, observedGeneration) is written only once the CronJob matches,
 * so it never claims a generation whose child write failed; the finalizer goes last. Events are
 * the exception: each is sent once the write it reports has succeeded, and the next write does
 * not wait for it.
 */
export class ActionExecutor {
  constructor(
    private readonly clients: KubeClients,
    private readonly recorder: EventRecorder,
    private readonly log: Logger,
  ) {}

  /**
   * Returns the number of writes made, Events included. Stops when `signal` fires; a failed write
   * stops the run with a StepError.
   */
  async run(
    actions: readonly Action[],
    backupJob: BackupJob | undefined,
    signal?: AbortSignal,
  ): Promise<number> {
    let current = backupJob;
    let writes = 0;
    const events: Promise<void>[] = [];
    try {
      for (const action of actions) {
        signal?.throwIfAborted();
        if (!current) break;
        if (action.type === 'emitEvent') {
          events.push(this.emit(action, current).then(() => void (writes += 1)));
          continue;
        }
        try {
          current = (await this.apply(action, current)) ?? current;
        } catch (err) {
          if (signal?.aborted) throw err;
          throw new StepError(action.type, err, current, objectOf(action));
        }
        writes += 1;
      }
    } finally {
      // A run ends only when its Events have: the next run of the key then finds the series
      // they belong to.
      await Promise.all(events);
    }
    return writes;
  }

  /**
   * Carries out the report of a failure: each action is tried whatever became of the one before,
   * so an Event still says what a status write could not. Nothing here fails the run.
   */
  async report(actions: readonly Action[], backupJob: BackupJob): Promise<void> {
    let current = backupJob;
    for (const action of actions) {
      try {
        current = (await this.apply(action, current)) ?? current;
      } catch (err) {
        this.log.warn('could not report the failure', { action: action.type, error: String(err) });
      }
    }
  }

  /** Returns the BackupJob as the write left it, when the write was to the BackupJob. */
  private async apply(action: Action, bj: BackupJob): Promise<BackupJob | void> {
    const namespace = bj.metadata.namespace as string;
    const clients = this.clients;
    this.log.debug('action', { action: action.type });
    switch (action.type) {
      case 'addFinalizer':
        return this.patchFinalizers(bj, [...(bj.metadata.finalizers ?? []), FINALIZER]);
      case 'removeFinalizer':
        return this.patchFinalizers(
          bj,
          (bj.metadata.finalizers ?? []).filter((f) => f !== FINALIZER),
        );
      case 'updateStatus':
        return this.patchStatus(bj, action.status);
      case 'createCronJob':
        await clients.createCronJob(namespace, action.cronJob);
        return;
      case 'patchCronJob':
        await clients.patchCronJob({ namespace, name: action.name }, action.patch);
        return;
      case 'deleteCronJob':
        return ignoreNotFound(clients.deleteCronJob({ namespace, name: action.name }, action.uid));
      case 'createJob':
        await clients.createJob(namespace, action.job);
        return;
      case 'deleteJob':
        return ignoreNotFound(clients.deleteJob({ namespace, name: action.name }, action.uid));
      case 'emitEvent':
        return this.emit(action, bj);
    }
  }

  /** Events are best effort, as in client-go: a lost Event never fails a reconcile. */
  private emit(action: Action & { type: 'emitEvent' }, bj: BackupJob): Promise<void> {
    return this.recorder.record(bj, action.event).catch((err: unknown) => {
      this.log.warn('event not recorded', {
        reason: action.event.reason,
        code: classify(err).code,
        error: String(err),
      });
    });
  }

  private patchFinalizers(bj: BackupJob, finalizers: string[]): Promise<BackupJob> {
    const body = { metadata: { resourceVersion: bj.metadata.resourceVersion, finalizers } };
    return this.clients.patchBackupJob(refOf(bj), body);
  }

  private patchStatus(bj: BackupJob, status: BackupJobStatus): Promise<BackupJob> {
    const body = {
      metadata: { resourceVersion: bj.metadata.resourceVersion },
      status: withRemovals(bj.status ?? {}, status),
    };
    return this.clients.patchBackupJobStatus(refOf(bj), body);
  }
}

function refOf(bj: BackupJob) {
  return { namespace: bj.metadata.namespace as string, name: bj.metadata.name as string };
}

async function ignoreNotFound(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** A merge patch replaces what it names; keys the next status lacks must be sent as null. */
function withRemovals(current: BackupJobStatus, next: BackupJobStatus): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...next };
  for (const key of Object.keys(current)) if (!(key in next)) patch[key] = null;
  return patch;
}
