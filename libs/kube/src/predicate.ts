import type { KubeObject, ManagedFieldsEntry } from './types.js';

/**
 * Update predicates with controller-runtime's names: each says whether an update event can change
 * what the reconciler decides. Create and delete events always pass; only updates are filtered.
 */
export type UpdatePredicate<T extends KubeObject = KubeObject> = (old: T, obj: T) => boolean;

export const generationChanged: UpdatePredicate = (old, obj) =>
  old.metadata.generation !== obj.metadata.generation;

export const deletionTimestampChanged: UpdatePredicate = (old, obj) =>
  old.metadata.deletionTimestamp !== obj.metadata.deletionTimestamp;

export const finalizersChanged: UpdatePredicate = (old, obj) =>
  !sameList(old.metadata.finalizers, obj.metadata.finalizers);

export const labelsChanged: UpdatePredicate = (old, obj) =>
  !sameRecord(old.metadata.labels, obj.metadata.labels);

export const annotationsChanged: UpdatePredicate = (old, obj) =>
  !sameRecord(old.metadata.annotations, obj.metadata.annotations);

export const ownerReferencesChanged: UpdatePredicate = (old, obj) =>
  JSON.stringify(old.metadata.ownerReferences ?? []) !==
  JSON.stringify(obj.metadata.ownerReferences ?? []);

/** False for a resync, where the informer re-delivers an object it already had. */
export const resourceVersionChanged: UpdatePredicate = (old, obj) =>
  old.metadata.resourceVersion !== obj.metadata.resourceVersion;

/**
 * The status was written by someone other than `fieldManager`. The watcher cannot compare the
 * status with what the operator last wrote (that lives in the worker), and "status changed" alone
 * cannot tell the operator's own writes from anyone else's. The API server records who wrote what
 * in metadata.managedFields: a write to the status subresource by another manager adds that
 * manager's entry or moves its `time`. The operator's own writes only touch its own entry (or
 * shrink another's when it takes fields back, which is no new foreign write), so its status
 * updates never pass and cannot loop. Needs no status in the watched object, so it works on
 * metadata-only watches. Limits (see docs/watcher.md): managedFields `time` has one-second
 * resolution, so a second foreign write within the same second by the same manager is caught by
 * the resync instead; a server that records no managedFields never reports tampering here.
 */
export function statusWrittenByOther(fieldManager: string): UpdatePredicate {
  return (old, obj) => {
    const before = foreignStatusWrites(old.metadata.managedFields, fieldManager);
    for (const [writer, time] of foreignStatusWrites(obj.metadata.managedFields, fieldManager)) {
      if (before.get(writer) !== time) return true;
    }
    return false;
  };
}

export function or<T extends KubeObject>(...predicates: UpdatePredicate<T>[]): UpdatePredicate<T> {
  return (old, obj) => predicates.some((p) => p(old, obj));
}

export function and<T extends KubeObject>(...predicates: UpdatePredicate<T>[]): UpdatePredicate<T> {
  return (old, obj) => predicates.every((p) => p(old, obj));
}

/**
 * What a BackupJob update must change to be worth a reconcile: everything the reconciler reads
 * from the object besides the status it writes itself, plus status written by someone else.
 */
export function backupJobUpdatePredicate(fieldManager: string): UpdatePredicate {
  return or(
    generationChanged,
    deletionTimestampChanged,
    finalizersChanged,
    labelsChanged,
    annotationsChanged,
    ownerReferencesChanged,
    statusWrittenByOther(fieldManager),
  );
}

/** `manager|operation` → time of that manager's last write to the status subresource. */
function foreignStatusWrites(
  entries: readonly ManagedFieldsEntry[] | undefined,
  fieldManager: string,
): Map<string, string> {
  const writes = new Map<string, string>();
  for (const entry of entries ?? []) {
    if (entry.subresource !== 'status' || entry.manager === fieldManager) continue;
    writes.set(`${entry.manager ?? ''}|${entry.operation ?? ''}`, entry.time ?? '');
  }
  return writes;
}

function sameList(a: readonly string[] = [], b: readonly string[] = []): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

function sameRecord(
  a: Readonly<Record<string, string>> = {},
  b: Readonly<Record<string, string>> = {},
): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
