import type { KubeObject, ManagedFieldsEntry, ObjectMeta } from '#kube';
import { Interner } from './intern.js';
import { JsonPacker, PackedJson } from './packed-json.js';

/**
 * Cache transforms (controller-runtime's TransformFunc). The watcher's caches hold what two
 * readers need: its predicates (identity, labels, owners, who wrote what) and the workers'
 * reconciler, which reads the objects from the snapshots built out of these caches (specs,
 * statuses). Everything else (managedFields' field sets, the last-applied annotation, a Job's
 * pod template, a CronJob's list of active Jobs) is dropped, so memory here and in Redis does not
 * depend on what the server sent. What only the snapshots read, a CronJob's spec, is kept packed.
 */

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Fields = Record<string, unknown>;

const cronJobSpecs = new JsonPacker();
const shared = new Interner();

function slimMeta(meta: ObjectMeta): ObjectMeta {
  const annotations = meta.annotations;
  return {
    name: meta.name,
    namespace: meta.namespace,
    uid: meta.uid,
    resourceVersion: meta.resourceVersion,
    generation: meta.generation,
    creationTimestamp: meta.creationTimestamp,
    deletionTimestamp: meta.deletionTimestamp,
    labels: meta.labels,
    annotations:
      annotations && LAST_APPLIED in annotations
        ? withoutKey(annotations, LAST_APPLIED)
        : annotations,
    finalizers: meta.finalizers,
    ownerReferences: meta.ownerReferences?.map((ref) => ({
      ...ref,
      apiVersion: shared.intern(ref.apiVersion),
      kind: shared.intern(ref.kind),
    })),
  };
}

/** The object's kind, its slim metadata with who wrote it, and the given top-level fields. */
function keep(obj: KubeObject, fields: Fields): KubeObject {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { ...slimMeta(obj.metadata), managedFields: writers(obj) },
    ...fields,
  } as KubeObject;
}

function field(obj: KubeObject, name: string): Fields | undefined {
  return (obj as unknown as Fields)[name] as Fields | undefined;
}

/** A string that many objects repeat, kept once; anything else as it is. */
const once = (value: unknown): unknown =>
  typeof value === 'string' ? shared.intern(value) : value;

/** A condition with its enumerated fields (type, status, reason) kept once across objects. */
const condition = (c: unknown): unknown =>
  c !== null && typeof c === 'object'
    ? {
        ...c,
        type: once((c as Fields).type),
        status: once((c as Fields).status),
        reason: once((c as Fields).reason),
      }
    : c;

/** For BackupJobs: the whole spec and status, which the reconciler reads and writes. */
export function stripBackupJob(obj: KubeObject): KubeObject {
  const status = field(obj, 'status');
  const conditions = status?.conditions;
  return keep(obj, {
    spec: field(obj, 'spec'),
    status: Array.isArray(conditions)
      ? { ...status, conditions: conditions.map(condition) }
      : status,
  });
}

/**
 * For CronJobs: the spec (the reconciler compares the owned fields; nothing in the watcher reads
 * it, so it stays packed) and the last schedule time.
 */
export function stripCronJob(obj: KubeObject): KubeObject {
  const status = field(obj, 'status');
  const spec = field(obj, 'spec');
  return keep(obj, {
    spec: spec && new PackedJson(spec, cronJobSpecs),
    status: status && { lastScheduleTime: status.lastScheduleTime },
  });
}

/** For Jobs: how and when they ended; their spec is the CronJob's template and never read. */
export function stripJob(obj: KubeObject): KubeObject {
  const status = field(obj, 'status');
  return keep(obj, {
    status: status && {
      startTime: status.startTime,
      completionTime: status.completionTime,
      conditions: (status.conditions as Fields[] | undefined)?.map((c) =>
        condition({
          type: c.type,
          status: c.status,
          reason: c.reason,
          message: c.message,
          lastTransitionTime: c.lastTransitionTime,
        }),
      ),
    },
  });
}

/** What a snapshot stores of a cached object: all of it but the writers, which only predicates read. */
export function withoutWriters(obj: KubeObject): KubeObject {
  const { managedFields: _writers, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** managedFields entries without their field sets: who wrote, how, to which subresource, when. */
function writers(obj: KubeObject): ManagedFieldsEntry[] | undefined {
  return obj.metadata.managedFields?.map((entry) => ({
    manager: shared.intern(entry.manager),
    operation: shared.intern(entry.operation),
    subresource: shared.intern(entry.subresource),
    time: entry.time,
  }));
}

function withoutKey(record: Readonly<Record<string, string>>, key: string): Record<string, string> {
  const copy = { ...record };
  delete copy[key];
  return copy;
}
