import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import type { BackupJobStatus } from '#api';

/** An events.k8s.io/v1 Event about the BackupJob, optionally naming the child it concerns. */
export interface EventSpec {
  readonly type: 'Normal' | 'Warning';
  /** CamelCase, what happened (CronJobCreated, InvalidSpec, CleanupFailed …). */
  readonly reason: string;
  /** CamelCase, what the operator did or failed to do (Create, Update, Validate, Cleanup …). */
  readonly action: string;
  readonly note: string;
  readonly related?: { readonly apiVersion: string; readonly kind: string; readonly name: string };
}

/**
 * What the controller must do, in order. Every write carries what it needs for a precondition:
 * CronJob patches carry the read resourceVersion, deletes name the uid that was seen. The
 * controller stops at the first failing action, so later actions never run on a stale plan.
 */
export type Action =
  | { readonly type: 'addFinalizer' }
  | { readonly type: 'removeFinalizer' }
  | { readonly type: 'createCronJob'; readonly cronJob: V1CronJob }
  | {
      readonly type: 'patchCronJob';
      readonly name: string;
      /** A merge patch of the owned fields that differ, with metadata.resourceVersion. */
      readonly patch: Readonly<Record<string, unknown>>;
      readonly fields: readonly string[];
    }
  | { readonly type: 'deleteCronJob'; readonly name: string; readonly uid: string }
  | { readonly type: 'createJob'; readonly job: V1Job }
  | { readonly type: 'deleteJob'; readonly name: string; readonly uid: string }
  | { readonly type: 'updateStatus'; readonly status: BackupJobStatus }
  | { readonly type: 'emitEvent'; readonly event: EventSpec };
