import type { V1ObjectMeta } from '@kubernetes/client-node';
import { FINALIZER, type BackupJob } from '#api';

/** controllerutil.HasControllerReference for one owner: the controller ref carries its uid. */
export function isControlledBy(child: { metadata?: V1ObjectMeta }, owner: BackupJob): boolean {
  const ref = child.metadata?.ownerReferences?.find((r) => r.controller === true);
  return ref !== undefined && ref.uid === owner.metadata.uid;
}

export function hasFinalizer(backupJob: BackupJob): boolean {
  return backupJob.metadata.finalizers?.includes(FINALIZER) ?? false;
}
