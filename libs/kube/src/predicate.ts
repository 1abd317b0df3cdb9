import type { KubeObject, ManagedFieldsEntry } from './types.js';

/**
 * Update predicates with controller-runtime's names: each says whether an update event can change
 * what the reconciler decides. Create and delete events always pass; only updates are filtered.
 */
export type UpdatePredicate<T extends KubeObject = KubeObject> = (old: T, obj: T) => boolean;

/** Whether an object seen being created (not in an initial list) is worth a reconcile. */
export type AddPredicate<T extends KubeObject = KubeObject> = (obj: T) => boolean;

/**
 * The object was created or since written by someone other than `fieldManager`, or the server
 * records no managedFields. A child the operator created itself comes back as an add event that
 * would only re-run a reconcile that already knows what it made.
 */
export function createdByOther(fieldManager: string): AddPredicate {
  return (obj) => {
    const entries = obj.metadata.managedFields;
    return !entries?.length || entries.some((entry) => entry.manager !== fieldManager);
  };
}

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
  return (old, obj) => foreignWriteSince(old, obj, fieldManager, true);
}

/**
 * Someone other than `fieldManager` wrote the object, in any subresource, or the server records
 * no managedFields, so nobody can be ruled out. For the operator's children: its own writes to a
 * CronJob come back as events that would only re-run a reconcile that already knows what it
 * wrote, while anyone else's (an edit, the CronJob controller's status) must be looked at. Same
 * one-second limit as statusWrittenByOther.
 */
export function writtenByOther(fieldManager: string): UpdatePredicate {
  return (old, obj) =>
    !obj.metadata.managedFields?.length || foreignWriteSince(old, obj, fieldManager, false);
}

export function or<T extends KubeObject>(...predicates: UpdatePredicate<T>[]): UpdatePredicate<T> {
  return (old, obj) => predicates.some((p) => p(old, obj));
}

export function and<T extends KubeObject>(...predicates: UpdatePredicate<T>[]): UpdatePredicate<T> {
  return (old, obj) => predicates.every((p) => p(old, obj));
}

function foreignWriteSince(
  old: KubeObject,
  obj: KubeObject,
  fieldManager: string,
  statusOnly: boolean,
): boolean {
  const before = foreignWrites(old.metadata.managedFields, fieldManager, statusOnly);
  for (const [writer, time] of foreignWrites(
    obj.metadata.managedFields,
    fieldManager,
    statusOnly,
  )) {
    if (before.get(writer) !== time) return true;
  }
  return false;
}

/** `manager|operation|subresource` → time of that manager's last write. */
function foreignWrites(
  entries: readonly ManagedFieldsEntry[] | undefined,
  fieldManager: string,
  statusOnly: boolean,
): Map<string, string> {
  const writes = new Map<string, string>();
  for (const entry of entries ?? []) {
    if (entry.manager === fieldManager || (statusOnly && entry.subresource !== 'status')) continue;
    const writer = `${entry.manager ?? ''}|${entry.operation ?? ''}|${entry.subresource ?? ''}`;
    writes.set(writer, entry.time ?? '');
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
