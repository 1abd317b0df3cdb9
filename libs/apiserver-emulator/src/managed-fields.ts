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

/** FieldsV1 of the fields a request set (`f:<name>` per key, `.` for a set value). */
export function fieldsV1(value: unknown, top = true, inMeta = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isPlainObject(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    if (top && SKIPPED.has(k)) continue;
    if (inMeta && SKIPPED_META.has(k)) continue;
    out[`f:${k}`] = isPlainObject(v) ? fieldsV1(v, false, top && k === 'metadata') : {};
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
