import { ApiError, badRequest } from './errors.js';
import type { JSONSchemaProps } from './crd/schema.js';
import { clone, deepEqual, isPlainObject } from './util.js';

/** RFC 7386 JSON merge patch: objects merge, null deletes, everything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/'))
    throw badRequest(
      `the server rejected our request due to an error in our request: invalid JSON pointer ${path}`,
    );
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(
  doc: unknown,
  parts: string[],
  path: string,
): [Record<string, unknown> | unknown[], string] {
  let cur = doc;
  for (const p of parts.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[Number(p)] : isPlainObject(cur) ? cur[p] : undefined;
    if (cur === undefined) throw unprocessable(`doc is missing path: "${path}": missing value`);
  }
  if (!Array.isArray(cur) && !isPlainObject(cur))
    throw unprocessable(`doc is missing path: "${path}": missing value`);
  return [cur, parts[parts.length - 1]!];
}

function unprocessable(message: string): ApiError {
  return new ApiError(422, 'Invalid', message);
}

function readAt(doc: unknown, path: string): unknown {
  let cur = doc;
  for (const p of pointer(path)) {
    cur = Array.isArray(cur) ? cur[Number(p)] : isPlainObject(cur) ? cur[p] : undefined;
    if (cur === undefined) throw unprocessable(`doc is missing path: "${path}": missing value`);
  }
  return cur;
}

function removeAt(doc: unknown, path: string): unknown {
  const [parent, key] = parentOf(doc, pointer(path), path);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!(i >= 0 && i < parent.length))
      throw unprocessable(`Unable to remove nonexistent key: ${key}: missing value`);
    return parent.splice(i, 1)[0];
  }
  if (!(key in parent))
    throw unprocessable(`Unable to remove nonexistent key: ${key}: missing value`);
  const v = parent[key];
  delete parent[key];
  return v;
}

function addAt(doc: unknown, path: string, value: unknown, replace: boolean): unknown {
  const parts = pointer(path);
  if (parts.length === 0) return value;
  const [parent, key] = parentOf(doc, parts, path);
  if (Array.isArray(parent)) {
    const i = key === '-' ? parent.length : Number(key);
    if (!(i >= 0 && i <= parent.length))
      throw unprocessable(
        `add operation does not apply: doc is missing path: "${path}": missing value`,
      );
    if (replace) parent[i] = value;
    else parent.splice(i, 0, value);
  } else {
    if (replace && !(key in parent))
      throw unprocessable(
        `replace operation does not apply: doc is missing key: ${path}: missing value`,
      );
    parent[key] = value;
  }
  return doc;
}

/** RFC 6902 JSON patch; a failed `test` is a 422 like the real server. */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops))
    throw badRequest(
      'the server rejected our request due to an error in our request: json patch must be an array',
    );
  let doc = clone(target);
  for (const op of ops as JsonPatchOp[]) {
    switch (op.op) {
      case 'add':
        doc = addAt(doc, op.path, clone(op.value), false);
        break;
      case 'replace':
        doc = addAt(doc, op.path, clone(op.value), true);
        break;
      case 'remove':
        removeAt(doc, op.path);
        break;
      case 'move':
        doc = addAt(doc, op.path, removeAt(doc, op.from ?? ''), false);
        break;
      case 'copy':
        doc = addAt(doc, op.path, clone(readAt(doc, op.from ?? '')), false);
        break;
      case 'test':
        if (!deepEqual(readAt(doc, op.path), op.value))
          throw unprocessable(`testing value ${op.path} failed: test failed`);
        break;
      default:
        throw badRequest(`Unexpected kind: ${op.op}`);
    }
  }
  return doc;
}

/**
 * Merge keys of the built-in types' patchStrategy:"merge" lists (k8s.io/api generated tags),
 * limited to the fields kubectl apply and an operator send for the kinds the emulator serves.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  imagePullSecrets: 'name',
  ownerReferences: 'uid',
  conditions: 'type',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  secrets: 'name',
};
/** The merge key of a built-in list field, if it merges by key. */
export function mergeKeyFor(field: string): string[] | undefined {
  const key = MERGE_KEYS[field];
  return key ? [key] : undefined;
}

const MERGED_PRIMITIVE_LISTS = new Set(['finalizers']);

function mergeList(key: string, live: unknown[], patch: unknown[]): unknown[] {
  if (MERGED_PRIMITIVE_LISTS.has(key)) return [...live, ...patch.filter((v) => !live.includes(v))];
  const mk = MERGE_KEYS[key];
  if (!mk) return clone(patch.filter((p) => !(isPlainObject(p) && '$patch' in p)));
  const out = live.map((v) => clone(v));
  for (const item of patch) {
    if (!isPlainObject(item)) continue;
    const idx = out.findIndex((v) => isPlainObject(v) && v[mk] === item[mk]);
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
    } else if (item.$patch === 'replace') {
      return clone(patch.filter((p) => !(isPlainObject(p) && p.$patch === 'replace')));
    } else if (idx >= 0) out[idx] = strategicMergePatch(out[idx], item);
    else out.push(strategicMergePatch({}, item));
  }
  return out;
}

/** Strategic merge patch for built-in kinds (merge keys + `$patch`/`$retainKeys` directives). */
export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return clone(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  const retain = Array.isArray(patch.$retainKeys) ? (patch.$retainKeys as string[]) : undefined;
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$setElementOrder/') || k === '$retainKeys' || k === '$patch') continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(out[field]) && Array.isArray(v))
        out[field] = (out[field] as unknown[]).filter((x) => !v.includes(x));
      continue;
    }
    if (v === null) delete out[k];
    else if (Array.isArray(v) && Array.isArray(out[k]))
      out[k] = mergeList(k, out[k] as unknown[], v);
    else if (Array.isArray(v)) out[k] = mergeList(k, [], v);
    else {
      const merged = strategicMergePatch(out[k], v);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    }
  }
  if (retain)
    for (const k of Object.keys(out)) if (!retain.includes(k) && !(k in patch)) delete out[k];
  return out;
}

/**
 * Server-side apply, approximated: the applied configuration is merged into the live object;
 * lists declared `x-kubernetes-list-type: map` merge by their keys, other lists are replaced.
 */
export function applyPatch(
  live: unknown,
  applied: unknown,
  schema: JSONSchemaProps | undefined,
): unknown {
  if (!isPlainObject(applied)) return clone(applied);
  const out: Record<string, unknown> = isPlainObject(live) ? { ...live } : {};
  for (const [k, v] of Object.entries(applied)) {
    const child =
      schema?.properties?.[k] ??
      (isPlainObject(schema?.additionalProperties) ? schema.additionalProperties : undefined);
    if (v === null) delete out[k];
    else if (Array.isArray(v)) out[k] = applyList(out[k], v, child, k);
    else out[k] = applyPatch(out[k], v, child);
  }
  return out;
}

function applyList(
  live: unknown,
  applied: unknown[],
  schema: JSONSchemaProps | undefined,
  key: string,
): unknown[] {
  const keys =
    schema?.['x-kubernetes-list-type'] === 'map'
      ? schema['x-kubernetes-list-map-keys']
      : MERGE_KEYS[key]
        ? [MERGE_KEYS[key]!]
        : undefined;
  if (!keys || !Array.isArray(live)) return clone(applied);
  const out = live.map((v) => clone(v));
  for (const item of applied) {
    if (!isPlainObject(item)) continue;
    const idx = out.findIndex((v) => isPlainObject(v) && keys.every((k) => v[k] === item[k]));
    if (idx >= 0) out[idx] = applyPatch(out[idx], item, schema?.items);
    else out.push(clone(item));
  }
  return out;
}
