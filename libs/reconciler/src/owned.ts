import type { V1CronJob } from '@kubernetes/client-node';
import { semanticallyEqual } from './semantic.js';

/**
 * The fields of a CronJob the operator owns. Everything else (fields the API server defaults,
 * labels and annotations others add, pod settings the operator does not set) is left alone, so
 * neither defaults nor other controllers cause an update loop.
 *
 * `keys`: a string map where only the operator's keys are owned; `value`: the whole value,
 * compared semantically (see semanticallyEqual), where an unset desired value means "absent".
 */
interface OwnedField {
  readonly path: readonly string[];
  readonly kind: 'keys' | 'value';
}

const TEMPLATE = ['spec', 'jobTemplate', 'spec', 'template'];

const OWNED_FIELDS: readonly OwnedField[] = [
  { path: ['metadata', 'labels'], kind: 'keys' },
  { path: ['metadata', 'annotations'], kind: 'keys' },
  ...['schedule', 'timeZone', 'suspend', 'concurrencyPolicy'].map(specField),
  ...['successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds'].map(
    specField,
  ),
  { path: ['spec', 'jobTemplate', 'metadata', 'labels'], kind: 'keys' },
  { path: ['spec', 'jobTemplate', 'metadata', 'annotations'], kind: 'keys' },
  { path: ['spec', 'jobTemplate', 'spec', 'backoffLimit'], kind: 'value' },
  { path: ['spec', 'jobTemplate', 'spec', 'activeDeadlineSeconds'], kind: 'value' },
  { path: [...TEMPLATE, 'metadata', 'labels'], kind: 'keys' },
  { path: [...TEMPLATE, 'metadata', 'annotations'], kind: 'keys' },
  ...['restartPolicy', 'automountServiceAccountToken', 'securityContext'].map(podField),
  ...['containers', 'volumes'].map(podField),
];

function specField(name: string): OwnedField {
  return { path: ['spec', name], kind: 'value' };
}

function podField(name: string): OwnedField {
  return { path: [...TEMPLATE, 'spec', name], kind: 'value' };
}

type Tree = Record<string, unknown>;

function get(object: unknown, path: readonly string[]): unknown {
  let node = object;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Tree)[key];
  }
  return node;
}

function fieldDiffers(field: OwnedField, desired: V1CronJob, actual: V1CronJob): boolean {
  const want = get(desired, field.path);
  const have = get(actual, field.path);
  if (field.kind === 'value') return !semanticallyEqual(want, have, `.${field.path.join('.')}`);
  const wantMap = (want ?? {}) as Record<string, string>;
  const haveMap = (have ?? {}) as Record<string, unknown>;
  return Object.entries(wantMap).some(([key, value]) => haveMap[key] !== value);
}

/** The dotted paths of owned fields whose actual value differs from the desired one. */
export function ownedFieldDiff(desired: V1CronJob, actual: V1CronJob): string[] {
  return OWNED_FIELDS.filter((field) => fieldDiffers(field, desired, actual)).map((field) =>
    field.path.join('.'),
  );
}

function parentOf(root: Tree, path: readonly string[]): Tree {
  let node = root;
  for (const key of path.slice(0, -1)) {
    const child = node[key];
    if (typeof child !== 'object' || child === null) node[key] = {};
    node = node[key] as Tree;
  }
  return node;
}

/**
 * A JSON merge patch (RFC 7386) that sets the differing owned fields to their desired values
 * and nothing else: fields others own, and fields newer API versions add that this client does
 * not know, are never sent back, so they cannot be wiped. Unset desired values become null
 * (removal). metadata.resourceVersion makes it fail with 409 if the CronJob changed since read.
 */
export function ownedFieldsPatch(desired: V1CronJob, actual: V1CronJob): Tree {
  const patch: Tree = { metadata: { resourceVersion: actual.metadata?.resourceVersion } };
  for (const field of OWNED_FIELDS.filter((f) => fieldDiffers(f, desired, actual))) {
    const want = get(desired, field.path);
    const leaf = field.path[field.path.length - 1] as string;
    parentOf(patch, field.path)[leaf] = patchValue(want);
  }
  return patch;
}

/**
 * A merge patch merges objects key by key, so a key the operator leaves unset must be sent as
 * null to remove what someone else put there; lists are replaced whole and need no such care.
 */
function patchValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return structuredClone(value);
  }
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, patchValue(child)]));
}
