import type { BackupJobSpec } from '#api';

/** The kinds of object a BackupJob may name for its pod to use, by their RBAC resource. */
export type GrantedResource = 'secrets' | 'persistentvolumeclaims';

/** An object the spec names that the namespace must opt in before a pod uses it. */
export interface ObjectReference {
  readonly resource: GrantedResource;
  readonly name: string;
}

/**
 * The objects a spec names that need the namespace's opt-in: spec.secretRef and
 * spec.storage.claimName. The claim the operator's configuration names for a spec without
 * spec.storage is not among them: the author chose nothing, and the backups go to their own
 * folder `<namespace>/<name>` of it. Tolerates a spec the schema did not check.
 */
export function referencedObjects(spec: Partial<BackupJobSpec> | undefined): ObjectReference[] {
  const refs: ObjectReference[] = [];
  const secret = spec?.secretRef?.name;
  if (typeof secret === 'string' && secret !== '') refs.push({ resource: 'secrets', name: secret });
  const claim = spec?.storage?.claimName;
  if (typeof claim === 'string' && claim !== '') {
    refs.push({ resource: 'persistentvolumeclaims', name: claim });
  }
  return refs;
}
