import { ApiError } from './errors.js';
import { fieldsV1, unionFields, type ListKeys, type ManagedFieldsEntry } from './managed-fields.js';
import { deepEqual, isPlainObject } from './util.js';

/**
 * Field ownership for server-side apply (docs/reference/using-api/server-side-apply/): an apply
 * that changes a field another manager owns is a conflict unless forced (then ownership moves);
 * fields the applier owned before and no longer applies are removed when nobody else owns them.
 */
type Path = string[];

const SEP = '\u0001';

/** Leaf paths of a FieldsV1 set. */
function leafPaths(fields: Record<string, unknown>, prefix: Path = [], out: Path[] = []): Path[] {
  for (const [k, v] of Object.entries(fields)) {
    if (k === '.') continue;
    const child = isPlainObject(v) ? v : {};
    const nested = Object.keys(child).filter((c) => c !== '.');
    if (nested.length === 0) out.push([...prefix, k]);
    else leafPaths(child, [...prefix, k], out);
  }
  return out;
}

/** Paths of list-map elements (nodes with a `.` entry): removing one removes the whole element. */
function elementPaths(
  fields: Record<string, unknown>,
  prefix: Path = [],
  out: Path[] = [],
): Path[] {
  for (const [k, v] of Object.entries(fields)) {
    if (!isPlainObject(v)) continue;
    if ('.' in v) out.push([...prefix, k]);
    elementPaths(v, [...prefix, k], out);
  }
  return out;
}

function step(
  value: unknown,
  segment: string,
): { container: unknown; key: string | number } | undefined {
  if (segment.startsWith('f:'))
    return isPlainObject(value) ? { container: value, key: segment.slice(2) } : undefined;
  if (segment.startsWith('k:') && Array.isArray(value)) {
    const want = JSON.parse(segment.slice(2)) as Record<string, unknown>;
    const i = value.findIndex(
      (item) =>
        isPlainObject(item) && Object.entries(want).every(([k, v]) => deepEqual(item[k], v)),
    );
    return i >= 0 ? { container: value, key: i } : undefined;
  }
  return undefined;
}

function valueAt(obj: unknown, path: Path): unknown {
  let cur = obj;
  for (const seg of path) {
    const s = step(cur, seg);
    if (!s) return undefined;
    cur = (s.container as Record<string | number, unknown>)[s.key];
  }
  return cur;
}

function removeAt(obj: unknown, path: Path): void {
  let cur = obj;
  for (const [i, seg] of path.entries()) {
    const s = step(cur, seg);
    if (!s) return;
    if (i === path.length - 1) {
      if (Array.isArray(s.container)) s.container.splice(s.key as number, 1);
      else delete (s.container as Record<string, unknown>)[s.key as string];
      return;
    }
    cur = (s.container as Record<string | number, unknown>)[s.key];
  }
}

/** `.spec.target`, `.status.conditions[type="Ready"].status`. */
function pathText(path: Path): string {
  return path
    .map((seg) => {
      if (seg.startsWith('f:')) return `.${seg.slice(2)}`;
      const keys = JSON.parse(seg.slice(2)) as Record<string, unknown>;
      return `[${Object.entries(keys)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    })
    .join('');
}

function owned(entry: ManagedFieldsEntry): Set<string> {
  return new Set(leafPaths(entry.fieldsV1).map((p) => p.join(SEP)));
}

function withoutPaths(
  entry: ManagedFieldsEntry,
  remove: Set<string>,
): ManagedFieldsEntry | undefined {
  const keep = leafPaths(entry.fieldsV1).filter((p) => !remove.has(p.join(SEP)));
  if (keep.length === 0) return undefined;
  const fields: Record<string, unknown> = {};
  for (const p of keep) {
    let node = fields;
    for (const seg of p) node = (node[seg] ??= {}) as Record<string, unknown>;
  }
  return { ...entry, fieldsV1: fields };
}

export interface ApplyInput {
  live: unknown;
  merged: Record<string, unknown>;
  config: unknown;
  manager: string;
  subresource: string;
  force: boolean;
  entries: ManagedFieldsEntry[];
  listKeys: ListKeys;
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * kube-apiserver's lastAppliedManager: `kubectl apply --server-side` (manager "kubectl") may take
 * the fields a client-side apply recorded in the last-applied-configuration annotation, so the
 * first server-side apply after client-side ones does not conflict over them.
 */
function upgradesClientSideApply(input: ApplyInput, conflicts: { path: Path }[]): boolean {
  if (input.manager !== 'kubectl' || !isPlainObject(input.live)) return false;
  const meta = input.live.metadata as { annotations?: Record<string, string> } | undefined;
  const text = meta?.annotations?.[LAST_APPLIED];
  if (!text) return false;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(text);
  } catch {
    return false;
  }
  const allowed = new Set(leafPaths(fieldsV1(lastApplied, input.listKeys)).map((p) => p.join(SEP)));
  return conflicts.every((c) => allowed.has(c.path.join(SEP)));
}

/** Checks conflicts, removes fields no longer applied, and returns the other managers' entries after the apply. */
export function serverSideApply(input: ApplyInput): {
  merged: Record<string, unknown>;
  entries: ManagedFieldsEntry[];
  applied: Record<string, unknown>;
} {
  const applied = fieldsV1(input.config, input.listKeys);
  const appliedPaths = leafPaths(applied);
  const sub = input.subresource;
  const sameScope = (e: ManagedFieldsEntry) =>
    (e.subresource ?? '') === sub || !e.subresource || !sub;
  const others = input.entries.filter((e) => e.manager !== input.manager && sameScope(e));
  const conflicts: { manager: string; apiVersion: string; path: Path }[] = [];
  const taken = new Set<string>();
  for (const path of appliedPaths) {
    if (deepEqual(valueAt(input.live, path), valueAt(input.config, path))) continue;
    const id = path.join(SEP);
    for (const e of others) {
      if (owned(e).has(id)) {
        conflicts.push({ manager: e.manager, apiVersion: e.apiVersion, path });
        taken.add(id);
      }
    }
  }
  if (conflicts.length && !input.force && !upgradesClientSideApply(input, conflicts)) {
    const list = conflicts.map(
      (c) => `conflict with "${c.manager}" using ${c.apiVersion}: ${pathText(c.path)}`,
    );
    const message = `Apply failed with ${conflicts.length} conflict${conflicts.length > 1 ? 's' : ''}: ${list.join('\n')}`;
    throw new ApiError(409, 'Conflict', message, {
      causes: conflicts.map((c) => ({
        reason: 'FieldManagerConflict',
        message: `conflict with "${c.manager}" using ${c.apiVersion}`,
        field: pathText(c.path),
      })),
    });
  }
  const mine = input.entries.find(
    (e) => e.manager === input.manager && e.operation === 'Apply' && (e.subresource ?? '') === sub,
  );
  const appliedIds = new Set(appliedPaths.map((p) => p.join(SEP)));
  const ownedByOthers = new Set(others.flatMap((e) => [...owned(e)]));
  // Whole elements first: removing an element's key fields first would make it unfindable.
  const previous = mine ? [...elementPaths(mine.fieldsV1), ...leafPaths(mine.fieldsV1)] : [];
  const appliedElements = new Set(elementPaths(applied).map((p) => p.join(SEP)));
  const othersElements = new Set(
    others.flatMap((e) => elementPaths(e.fieldsV1).map((p) => p.join(SEP))),
  );
  for (const path of previous) {
    const id = path.join(SEP);
    const stillWanted = appliedIds.has(id) || appliedElements.has(id);
    if (!stillWanted && !ownedByOthers.has(id) && !othersElements.has(id))
      removeAt(input.merged, path);
  }
  const entries = input.entries.flatMap((e) => {
    if (!others.includes(e) || taken.size === 0) return [e];
    const next = withoutPaths(e, taken);
    return next ? [next] : [];
  });
  return { merged: input.merged, entries, applied };
}

/**
 * An Update takes ownership of the fields it changed: they leave every other entry, and entries
 * left with no field disappear (docs/reference/using-api/server-side-apply/#field-management).
 */
export function releaseChangedFields(
  entries: ManagedFieldsEntry[],
  keep: (e: ManagedFieldsEntry) => boolean,
  old: unknown,
  next: unknown,
  listKeys: ListKeys,
): ManagedFieldsEntry[] {
  if (!entries.some((e) => !keep(e))) return entries;
  const paths = [...leafPaths(fieldsV1(old, listKeys)), ...leafPaths(fieldsV1(next, listKeys))];
  const changed = new Set(
    paths.filter((p) => !deepEqual(valueAt(old, p), valueAt(next, p))).map((p) => p.join(SEP)),
  );
  if (changed.size === 0) return entries;
  return entries.flatMap((e) => {
    if (keep(e)) return [e];
    const shrunk = withoutPaths(e, changed);
    return shrunk ? [shrunk] : [];
  });
}

/**
 * What an Update's manager owns afterwards: what it owned before plus what this write set, less
 * the fields that no longer exist in the object.
 */
export function accumulateUpdate(
  previous: ManagedFieldsEntry | undefined,
  fields: Record<string, unknown>,
  next: unknown,
): Record<string, unknown> {
  const all = previous ? unionFields(previous.fieldsV1, fields) : fields;
  const gone = new Set(
    leafPaths(all)
      .filter((p) => valueAt(next, p) === undefined)
      .map((p) => p.join(SEP)),
  );
  if (gone.size === 0) return all;
  return (
    withoutPaths({ ...(previous ?? ({} as ManagedFieldsEntry)), fieldsV1: all }, gone)?.fieldsV1 ??
    {}
  );
}
