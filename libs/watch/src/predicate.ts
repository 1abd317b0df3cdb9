import {
  and,
  annotationsChanged,
  deletionTimestampChanged,
  finalizersChanged,
  generationChanged,
  labelsChanged,
  or,
  ownerReferencesChanged,
  statusWrittenByOther,
  writtenByOther,
  type UpdatePredicate,
} from '#kube';

/**
 * What a BackupJob update must change to be worth a reconcile: everything the reconciler reads
 * from the object besides what it writes itself (the status and its finalizer), plus status
 * or finalizers written by someone else.
 */
export function backupJobUpdatePredicate(fieldManager: string): UpdatePredicate {
  return or(
    generationChanged,
    deletionTimestampChanged,
    and(finalizersChanged, writtenByOther(fieldManager)),
    labelsChanged,
    annotationsChanged,
    ownerReferencesChanged,
    statusWrittenByOther(fieldManager),
  );
}

/**
 * What a CronJob update must change to be worth reconciling its BackupJob: a write by anyone but
 * the operator, or a change no managedFields entry records (deletion under way, owners moved by
 * the garbage collector).
 */
export function cronJobUpdatePredicate(fieldManager: string): UpdatePredicate {
  return or(deletionTimestampChanged, ownerReferencesChanged, writtenByOther(fieldManager));
}
