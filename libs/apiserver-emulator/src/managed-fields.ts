import { isPlainObject, rfc3339 } from './util.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

const SKIPPED = new Set(['apiVersion', 'kind']);
const SKIPPED_META = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generateName',
  'selfLink',
]);

/** The keys that identify an element of a list-map (`x-kubernetes-list-map-keys` or a built-in merge key). */
export type ListKeys = (path: string[], field: string) => string[] | undefined;

const noListKeys: ListKeys = () => undefined;

/**
 * FieldsV1 of the fields a request set: `f:<name>` per key, `k:{…}` + `.` per list-map element,
 * other lists atomic.
 */
export function fieldsV1(
  value: unknown,
  listKeys: ListKeys = noListKeys,
  path: string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isPlainObject(value)) return out;
  const top = path.length === 0;
  const inMeta = path.length === 1 && path[0] === 'metadata';
  for (const [k, v] of Object.entries(value)) {
    if (top && SKIPPED.has(k)) continue;
    if (inMeta && SKIPPED_META.has(k)) continue;
    const keys = Array.isArray(v) ? listKeys(path, k) : undefined;
    if (keys && Array.isArray(v)) {
      const elements: Record<string, unknown> = {};
      for (const item of v) {
        if (!isPlainObject(item)) continue;
        elements[`k:${JSON.stringify(Object.fromEntries(keys.map((key) => [key, item[key]])))}`] = {
          '.': {},
          ...fieldsV1(item, listKeys, [...path, k, '*']),
        };
      }
      out[`f:${k}`] = elements;
    } else if (isPlainObject(v)) {
      const child = fieldsV1(v, listKeys, [...path, k]);
      // metadata holding only server-set fields (name, namespace…) is not owned by anyone.
      if (!(top && k === 'metadata' && Object.keys(child).length === 0)) out[`f:${k}`] = child;
    } else out[`f:${k}`] = {};
  }
  return out;
}

/** One entry per (manager, operation, subresource), as docs/reference/using-api/server-side-apply/#field-management describes. */
export function recordManager(
  existing: unknown,
  entry: Omit<ManagedFieldsEntry, 'time' | 'fieldsType'>,
  now: number,
): ManagedFieldsEntry[] {
  const list = (Array.isArray(existing) ? existing : []) as ManagedFieldsEntry[];
  const same = (e: ManagedFieldsEntry) =>
    e.manager === entry.manager &&
    e.operation === entry.operation &&
    (e.subresource ?? '') === (entry.subresource ?? '');
  const next: ManagedFieldsEntry = { ...entry, time: rfc3339(now), fieldsType: 'FieldsV1' };
  if (!next.subresource) delete next.subresource;
  return [...list.filter((e) => !same(e)), next];
}

/** The manager name client-go derives from the User-Agent when no fieldManager is given. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  if (!userAgent) return 'unknown';
  return userAgent.split('/')[0]!.slice(0, 128);
}

/**
 * The fields a write may own, given where it was sent: a status subresource write owns status
 * only, a scale write spec.replicas only, and a main-resource write of a kind with a status subresource never owns status (the
 * registry strategies reset those fields).
 */
export function scopeFields(
  fields: Record<string, unknown>,
  statusSubresource: boolean,
  subresource: string,
): Record<string, unknown> {
  if (subresource === 'status')
    return fields['f:status'] === undefined ? {} : { 'f:status': fields['f:status'] };
  // A scale write changes spec.replicas and nothing else.
  if (subresource === 'scale') return { 'f:spec': { 'f:replicas': {} } };
  if (!statusSubresource || fields['f:status'] === undefined) return fields;
  const { 'f:status': _status, ...rest } = fields;
  return rest;
}

/** Union of two FieldsV1 sets. */
export function unionFields(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = isPlainObject(prev) && isPlainObject(v) ? unionFields(prev, v) : v;
  }
  return out;
}
