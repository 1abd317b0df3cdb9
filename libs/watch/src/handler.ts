import { GROUP, KIND, LABEL_OWNER_NAME } from '#api';
import type { KubeObject, OwnerReference } from '#kube';

/**
 * Maps child events to the key of the BackupJob they belong to (controller-runtime's
 * EnqueueRequestForOwner, with the label as the cheaper first source for Jobs).
 */

/** The ownerReference with controller=true: at most one per object. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

function isBackupJob(ref: OwnerReference): boolean {
  return ref.kind === KIND && ref.apiVersion.split('/')[0] === GROUP;
}

function keyIn(obj: KubeObject, name: string): string {
  return `${obj.metadata.namespace ?? ''}/${name}`;
}

/** CronJob → its controlling BackupJob's key; a CronJob controlled by anything else maps to none. */
export function backupJobKeyOfCronJob(cronJob: KubeObject): string | undefined {
  const owner = controllerOf(cronJob);
  return owner && isBackupJob(owner) ? keyIn(cronJob, owner.name) : undefined;
}

/** Finds a CronJob by namespace and name, e.g. in the CronJob informer's cache. */
export type CronJobLookup = (namespace: string, name: string) => KubeObject | undefined;

/**
 * Job → BackupJob key. The operator labels every Job (through the CronJob's jobTemplate and on
 * the cleanup Job), so the label answers without a lookup; a Job without it is traced through its
 * controller: the BackupJob itself (cleanup Job) or a CronJob the BackupJob controls.
 */
export function backupJobKeyOfJob(job: KubeObject, cronJobs?: CronJobLookup): string | undefined {
  const label = job.metadata.labels?.[LABEL_OWNER_NAME];
  if (label) return keyIn(job, label);
  const owner = controllerOf(job);
  if (!owner) return undefined;
  if (isBackupJob(owner)) return keyIn(job, owner.name);
  if (owner.kind !== 'CronJob') return undefined;
  const cronJob = cronJobs?.(job.metadata.namespace ?? '', owner.name);
  return cronJob ? backupJobKeyOfCronJob(cronJob) : undefined;
}
