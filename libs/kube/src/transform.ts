import type { KubeObject, ManagedFieldsEntry, ObjectMeta } from './types.js';

/**
 * Cache transforms (controller-runtime's TransformFunc): the watcher needs keys and the fields
 * its predicates compare, never specs, statuses or field sets, so caches keep only those. With
 * metadata-only watches the server already leaves spec and status out; the transform drops the
 * rest either way, so memory per object does not depend on what the server sent.
 */

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function slimMeta(meta: ObjectMeta): ObjectMeta {
  const annotations = meta.annotations;
  return {
    name: meta.name,
    namespace: meta.namespace,
    uid: meta.uid,
    resourceVersion: meta.resourceVersion,
    generation: meta.generation,
    deletionTimestamp: meta.deletionTimestamp,
    labels: meta.labels,
    annotations:
      annotations && LAST_APPLIED in annotations
        ? withoutKey(annotations, LAST_APPLIED)
        : annotations,
    finalizers: meta.finalizers,
    ownerReferences: meta.ownerReferences,
  };
}

/** For Jobs: identity, labels and owners; no managedFields. */
export function stripToOwnership(obj: KubeObject): KubeObject {
  return { metadata: slimMeta(obj.metadata) };
}

/**
 * For CronJobs: also who wrote them (managedFields entries without their field sets), for
 * cronJobUpdatePredicate.
 */
export function stripToOwnershipAndWriters(obj: KubeObject): KubeObject {
  return { metadata: { ...slimMeta(obj.metadata), managedFields: writers(obj, () => true) } };
}

/**
 * For BackupJobs: what the update predicate compares, including who last wrote the status
 * (managedFields entries of the status subresource, without their field sets).
 */
export function stripToPredicateFields(obj: KubeObject): KubeObject {
  const statusWrites = writers(obj, (entry) => entry.subresource === 'status');
  return { metadata: { ...slimMeta(obj.metadata), managedFields: statusWrites } };
}

function writers(
  obj: KubeObject,
  keep: (entry: ManagedFieldsEntry) => boolean,
): ManagedFieldsEntry[] | undefined {
  const entries = obj.metadata.managedFields;
  if (!entries) return undefined;
  return entries.filter(keep).map((entry) => ({
    manager: entry.manager,
    operation: entry.operation,
    subresource: entry.subresource,
    time: entry.time,
  }));
}

function withoutKey(record: Readonly<Record<string, string>>, key: string): Record<string, string> {
  const copy = { ...record };
  delete copy[key];
  return copy;
}
