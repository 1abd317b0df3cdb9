import type { Clock } from './clock.js';
import { validateCel } from './crd/cel.js';
import { applyDefaults, prune, validate } from './crd/schema.js';
import {
  alreadyExists,
  badRequest,
  conflict,
  forbidden,
  invalid,
  notFound,
  unsupportedMediaType,
  type FieldError,
} from './errors.js';
import {
  fieldsV1,
  recordManager,
  scopeFields,
  type ListKeys,
  type ManagedFieldsEntry,
} from './managed-fields.js';
import { accumulateUpdate, releaseChangedFields, serverSideApply } from './ssa.js';
import { applyPatch, jsonPatch, mergeKeyFor, mergePatch, strategicMergePatch } from './patch.js';
import type { Registry } from './registry.js';
import { apiVersionOf, type ResourceType } from './resource-type.js';
import type { Store, Stored } from './store.js';
import type { KubeObject, UserInfo } from './types.js';
import { clone, deepEqual, isPlainObject, newUid, randomSuffix, rfc3339 } from './util.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  fieldValidation?: FieldValidation;
  subresource?: string;
  /** How the write is recorded in managedFields (server-side apply creates record Apply). */
  operation?: 'Apply' | 'Update';
  /** Who asks, for admission that depends on it; writes made in-process leave it unset. */
  user?: UserInfo;
}

export interface WriteResult {
  /** Stored form (core/v1 for Events); serve() converts for the requested version. */
  obj: KubeObject;
  created: boolean;
  warnings: string[];
}

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export interface DeleteOptions {
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
  /** Who asks, for admission that depends on it; deletes made in-process leave it unset. */
  user?: UserInfo;
}

export interface DeleteResult {
  obj: KubeObject;
  /** True when the object is gone; false when finalizers keep it (deletionTimestamp set). */
  deleted: boolean;
  /** Admission warnings for the client (Warning headers). */
  warnings?: string[];
}

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

const FINALIZER_FOREGROUND = 'foregroundDeletion';
const FINALIZER_ORPHAN = 'orphan';
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Options that change semantics, shared by every write path. */
export interface ObjectServiceOptions {
  /** Add foregroundDeletion/orphan finalizers (only meaningful with a garbage collector running). */
  garbageCollection: boolean;
}

/**
 * The registry strategies of the real API server (create/update/patch/delete semantics,
 * generation, status subresource, finalizers, schema) over the in-memory store.
 */
export class ObjectService {
  constructor(
    readonly registry: Registry,
    readonly store: Store,
    readonly clock: Clock,
    readonly options: ObjectServiceOptions,
  ) {}

  /** The object as a given served version shows it. */
  serve(rt: ResourceType, obj: KubeObject): KubeObject {
    const apiVersion = apiVersionOf(rt);
    if (obj.apiVersion === apiVersion && obj.kind === rt.kind) return obj;
    const converted = rt.toServed ? rt.toServed(obj) : { ...obj };
    return { apiVersion, kind: rt.kind, ...converted, metadata: obj.metadata } as KubeObject;
  }

  /** JSON of the served object, reusing the stored serialisation when no conversion is needed. */
  serveJson(rt: ResourceType, stored: Stored): string {
    if (stored.obj.apiVersion === apiVersionOf(rt) && stored.obj.kind === rt.kind)
      return stored.json;
    return JSON.stringify(this.serve(rt, stored.obj));
  }

  get(rt: ResourceType, namespace: string, name: string): Stored {
    const stored = this.store.get(rt.storageKey, rt.namespaced ? namespace : '', name);
    if (!stored) throw notFound(rt.plural, rt.group, name);
    return stored;
  }

  find(rt: ResourceType, namespace: string, name: string): Stored | undefined {
    return this.store.get(rt.storageKey, rt.namespaced ? namespace : '', name);
  }

  create(
    rt: ResourceType,
    namespace: string,
    body: KubeObject,
    opts: WriteOptions = {},
  ): WriteResult {
    // Owned fields are those the request set, before defaulting fills in more.
    const fields = scopeFields(fieldsV1(body, this.listKeys(rt)), rt.statusSubresource, '');
    const obj = this.intake(rt, body);
    const meta = obj.metadata;
    this.placeInNamespace(rt, obj, namespace);
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomSuffix()}`;
    if (!meta.name)
      throw invalid(rt.kind, rt.group, '', [
        { type: 'Required', field: 'metadata.name', detail: 'name or generateName is required' },
      ]);
    this.checkName(rt, meta.name);
    if (rt.namespaced) this.admitNamespace(rt, meta.namespace!, meta.name);
    if (this.find(rt, meta.namespace ?? '', meta.name))
      throw alreadyExists(rt.plural, rt.group, meta.name);
    for (const f of [
      'uid',
      'resourceVersion',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
      'selfLink',
      'managedFields',
    ]) {
      delete meta[f];
    }
    if (rt.statusSubresource) delete obj.status;
    meta.uid = newUid();
    meta.creationTimestamp = rfc3339(this.clock.now());
    if (rt.generation) meta.generation = 1;
    const warnings = this.admit(rt, obj, undefined, opts);
    meta.managedFields = recordManager(
      undefined,
      {
        manager: opts.fieldManager ?? 'unknown',
        operation: opts.operation ?? 'Update',
        apiVersion: apiVersionOf(rt),
        fieldsV1: fields,
      },
      this.clock.now(),
    );
    if (opts.dryRun) return { obj, created: true, warnings };
    const stored = this.store.put(rt.storageKey, obj, 'ADDED');
    return { obj: stored.obj, created: true, warnings };
  }

  update(
    rt: ResourceType,
    namespace: string,
    name: string,
    body: KubeObject,
    opts: WriteOptions = {},
  ): WriteResult {
    const existing = this.find(rt, namespace, name);
    const bodyName = body.metadata?.name;
    if (bodyName && bodyName !== name)
      throw badRequest(
        `the name of the object (${bodyName}) does not match the name on the URL (${name})`,
      );
    if (!existing) {
      if (rt.allowCreateOnUpdate && !opts.subresource)
        return this.create(rt, namespace, { ...body, metadata: { ...body.metadata, name } }, opts);
      throw notFound(rt.plural, rt.group, name);
    }
    const obj = this.intake(rt, body);
    const rv = obj.metadata.resourceVersion;
    if (rv && rv !== existing.obj.metadata.resourceVersion)
      throw conflict(rt.plural, rt.group, name);
    if (!rv && !rt.allowUnconditionalUpdate) {
      throw invalid(rt.kind, rt.group, name, [
        {
          type: 'Invalid',
          field: 'metadata.resourceVersion',
          value: '0x0',
          detail: 'must be specified for an update',
        },
      ]);
    }
    return this.writeUpdate(rt, existing.obj, obj, opts, fieldsV1(body, this.listKeys(rt)));
  }

  patch(
    rt: ResourceType,
    namespace: string,
    name: string,
    contentType: string,
    patch: unknown,
    opts: WriteOptions & { force?: boolean } = {},
  ): WriteResult {
    const type = contentType.split(';')[0]!.trim();
    if (type === PATCH_TYPES.strategic && rt.custom) {
      throw unsupportedMediaType(
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      );
    }
    if (!Object.values(PATCH_TYPES).includes(type as never)) {
      throw unsupportedMediaType(
        `the body of the request was in an unknown format - accepted media types include: ${Object.values(PATCH_TYPES).join(', ')}`,
      );
    }
    if (type === PATCH_TYPES.apply && !opts.fieldManager) {
      throw invalid('PatchOptions', 'meta.k8s.io', '', [
        { type: 'Required', field: 'fieldManager', detail: 'is required for apply patch' },
      ]);
    }
    const existing = this.find(rt, namespace, name);
    if (!existing) {
      if (type !== PATCH_TYPES.apply) throw notFound(rt.plural, rt.group, name);
      if (!isPlainObject(patch)) throw badRequest('apply patch must be an object');
      const body = {
        ...(patch as KubeObject),
        metadata: { ...(patch as KubeObject).metadata, name },
      };
      return this.create(rt, namespace, body, { ...opts, operation: 'Apply' });
    }
    const base = clone(this.serve(rt, existing.obj));
    const patched = this.applyPatchType(type, base, patch, rt) as KubeObject;
    if (!isPlainObject(patched) || !isPlainObject(patched.metadata))
      throw badRequest('patch produced an object without metadata');
    const rv = patched.metadata.resourceVersion;
    if (rv && rv !== existing.obj.metadata.resourceVersion)
      throw conflict(rt.plural, rt.group, name);
    if (patched.metadata.name !== name)
      throw badRequest(
        `the name of the object (${String(patched.metadata.name)}) does not match the name on the URL (${name})`,
      );
    if (type !== PATCH_TYPES.apply) {
      const fields = fieldsV1(type === PATCH_TYPES.merge ? patch : patched, this.listKeys(rt));
      return this.writeUpdate(rt, existing.obj, this.intake(rt, patched), opts, fields);
    }
    const applied = serverSideApply({
      live: base,
      merged: patched,
      config: patch,
      manager: opts.fieldManager!,
      subresource: opts.subresource ?? '',
      force: opts.force ?? false,
      entries: (existing.obj.metadata.managedFields ?? []) as ManagedFieldsEntry[],
      listKeys: this.listKeys(rt),
    });
    const obj = this.intake(rt, applied.merged as KubeObject);
    return this.writeUpdate(rt, existing.obj, obj, opts, applied.applied, 'Apply', applied.entries);
  }

  /** List-map keys by field path: the CRD schema's x-kubernetes-list-map-keys, or the built-in merge keys. */
  private listKeys(rt: ResourceType): ListKeys {
    return (path, field) => {
      if (path[0] === 'metadata' || !rt.custom) return mergeKeyFor(field);
      let schema = rt.schema;
      for (const seg of path) schema = seg === '*' ? schema?.items : schema?.properties?.[seg];
      const prop = schema?.properties?.[field];
      return prop?.['x-kubernetes-list-type'] === 'map'
        ? prop['x-kubernetes-list-map-keys']
        : undefined;
    };
  }

  private applyPatchType(
    type: string,
    base: KubeObject,
    patch: unknown,
    rt: ResourceType,
  ): unknown {
    switch (type) {
      case PATCH_TYPES.json:
        return jsonPatch(base, patch);
      case PATCH_TYPES.merge:
        return mergePatch(base, patch);
      case PATCH_TYPES.strategic:
        return strategicMergePatch(base, patch);
      default:
        return applyPatch(base, patch, rt.schema);
    }
  }

  delete(
    rt: ResourceType,
    namespace: string,
    name: string,
    opts: DeleteOptions = {},
  ): DeleteResult {
    const existing = this.get(rt, namespace, name);
    const old = existing.obj;
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== old.metadata.uid) {
      throw conflict(
        rt.plural,
        rt.group,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(
        rt.plural,
        rt.group,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
      );
    }
    const warnings = this.deleteHooks.flatMap((hook) => hook(rt, old, opts) ?? []);
    const policy =
      opts.propagationPolicy ??
      (opts.orphanDependents === true
        ? 'Orphan'
        : opts.orphanDependents === false
          ? 'Foreground'
          : undefined) ??
      (rt.defaultOrphan ? 'Orphan' : 'Background');
    const gcFinalizer = !this.options.garbageCollection
      ? undefined
      : policy === 'Foreground'
        ? FINALIZER_FOREGROUND
        : policy === 'Orphan'
          ? FINALIZER_ORPHAN
          : undefined;
    if (old.metadata.deletionTimestamp) return { obj: old, deleted: false, warnings };
    const finalizers = [...(old.metadata.finalizers ?? [])];
    if (gcFinalizer && !finalizers.includes(gcFinalizer)) finalizers.push(gcFinalizer);
    if (finalizers.length === 0 && !this.hasSpecFinalizers(rt, old)) {
      if (opts.dryRun) return { obj: old, deleted: true, warnings };
      const removed = this.store.remove(rt.storageKey, old.metadata.namespace ?? '', name)!;
      return { obj: removed.obj, deleted: true, warnings };
    }
    const next = clone(old);
    next.metadata.deletionTimestamp = rfc3339(this.clock.now());
    next.metadata.deletionGracePeriodSeconds = 0;
    next.metadata.finalizers = finalizers;
    if (next.metadata.generation) next.metadata.generation++;
    if (rt.plural === 'namespaces' && rt.group === '')
      next.status = { ...(next.status as object), phase: 'Terminating' };
    if (opts.dryRun) return { obj: next, deleted: false, warnings };
    return { obj: this.store.put(rt.storageKey, next, 'MODIFIED').obj, deleted: false, warnings };
  }

  /** Namespaces carry spec.finalizers ("kubernetes") that the namespace controller clears. */
  private hasSpecFinalizers(rt: ResourceType, obj: KubeObject): boolean {
    if (rt.plural !== 'namespaces' || rt.group !== '') return false;
    const f = (obj.spec as { finalizers?: string[] } | undefined)?.finalizers;
    return Array.isArray(f) && f.length > 0;
  }

  private writeUpdate(
    rt: ResourceType,
    old: KubeObject,
    incoming: KubeObject,
    opts: WriteOptions,
    fields: Record<string, unknown>,
    operation: 'Apply' | 'Update' = 'Update',
    entries: unknown = old.metadata.managedFields,
  ): WriteResult {
    const sub = opts.subresource ?? '';
    let next: KubeObject;
    if (sub === 'status') {
      next = clone(old);
      if (incoming.status === undefined) delete next.status;
      else next.status = incoming.status;
    } else if (sub === 'finalize') {
      next = clone(old);
      next.spec = {
        ...(old.spec as object),
        finalizers: (incoming.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [],
      };
    } else {
      next = incoming;
      if (rt.statusSubresource) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
    }
    const meta = next.metadata;
    for (const f of [
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
      'namespace',
      'name',
      'resourceVersion',
    ] as const) {
      if (old.metadata[f] === undefined) delete meta[f];
      else (meta as Record<string, unknown>)[f] = old.metadata[f];
    }
    const warnings = this.admit(rt, next, old, opts);
    if (old.metadata.deletionTimestamp) {
      const added = (meta.finalizers ?? []).filter(
        (f) => !(old.metadata.finalizers ?? []).includes(f),
      );
      if (added.length) {
        throw invalid(rt.kind, rt.group, meta.name!, [
          {
            type: 'Forbidden',
            field: 'metadata.finalizers',
            detail: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
          },
        ]);
      }
    }
    if (rt.generation && meta.generation !== undefined && specChanged(rt, old, next))
      meta.generation++;
    const manager = opts.fieldManager ?? 'unknown';
    const mine = (e: ManagedFieldsEntry) =>
      e.manager === manager && e.operation === 'Update' && (e.subresource ?? '') === sub;
    const base =
      operation === 'Update'
        ? releaseChangedFields(
            (entries ?? []) as ManagedFieldsEntry[],
            mine,
            old,
            next,
            this.listKeys(rt),
          )
        : entries;
    const scoped = scopeFields(fields, rt.statusSubresource, sub);
    const owned =
      operation === 'Update'
        ? accumulateUpdate((base as ManagedFieldsEntry[] | undefined)?.find(mine), scoped, next)
        : scoped;
    const recorded = recordManager(
      base,
      {
        manager,
        operation,
        apiVersion: apiVersionOf(rt),
        fieldsV1: owned,
        subresource: sub || undefined,
      },
      this.clock.now(),
    );
    meta.managedFields = old.metadata.managedFields;
    // An apply that changes no value may still change ownership, which is a write of its own.
    const ownershipChanged =
      operation === 'Apply' && !sameOwnership(old.metadata.managedFields, recorded);
    if (sameObject(old, next) && !ownershipChanged) return { obj: old, created: false, warnings };
    meta.managedFields = recorded;
    if (opts.dryRun) return { obj: next, created: false, warnings };
    if (
      meta.deletionTimestamp &&
      (meta.finalizers ?? []).length === 0 &&
      !this.hasSpecFinalizers(rt, next)
    ) {
      const removed = this.store.remove(rt.storageKey, meta.namespace ?? '', meta.name!)!;
      return { obj: removed.obj, created: false, warnings };
    }
    return { obj: this.store.put(rt.storageKey, next, 'MODIFIED').obj, created: false, warnings };
  }

  /** Body of a request → storage form, checking apiVersion/kind against the URL. */
  private intake(rt: ResourceType, body: KubeObject): KubeObject {
    if (!isPlainObject(body)) throw badRequest('the object provided is not a JSON object');
    const apiVersion = apiVersionOf(rt);
    if (
      (body.apiVersion && body.apiVersion !== apiVersion) ||
      (body.kind && body.kind !== rt.kind)
    ) {
      throw badRequest(
        `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersion})`,
      );
    }
    // Bodies are owned by the service from here on (HTTP bodies are freshly parsed; ObjectClient clones).
    const withType = { ...body, apiVersion, kind: rt.kind } as KubeObject;
    if (!isPlainObject(withType.metadata)) withType.metadata = {};
    if (!rt.toStorage) return withType;
    // Only Events convert on the way in, and their storage form is core/v1.
    return {
      ...rt.toStorage(withType),
      apiVersion: 'v1',
      kind: rt.kind,
      metadata: withType.metadata,
    };
  }

  private placeInNamespace(rt: ResourceType, obj: KubeObject, namespace: string): void {
    const meta = obj.metadata;
    if (!rt.namespaced) {
      delete meta.namespace;
      return;
    }
    if (meta.namespace && namespace && meta.namespace !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    meta.namespace = namespace || meta.namespace || 'default';
  }

  private checkName(rt: ResourceType, name: string): void {
    if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
      throw invalid(rt.kind, rt.group, name, [
        {
          type: 'Invalid',
          field: 'metadata.name',
          value: name,
          detail:
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        },
      ]);
    }
  }

  /** NamespaceLifecycle admission: the namespace must exist and not be terminating. */
  private admitNamespace(rt: ResourceType, namespace: string, name: string): void {
    const ns = this.store.get('/namespaces', '', namespace);
    if (!ns) throw notFound('namespaces', '', namespace);
    if (ns.obj.metadata.deletionTimestamp) {
      const err = forbidden(
        rt.plural,
        rt.group,
        name,
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
      err.details!.causes = [
        {
          reason: 'NamespaceTerminating',
          message: `namespace ${namespace} is being terminated`,
          field: 'metadata.namespace',
        },
      ];
      throw err;
    }
  }

  /** Defaulting, pruning and validation of the whole object (both create and update). */
  private admit(
    rt: ResourceType,
    obj: KubeObject,
    old: KubeObject | undefined,
    opts: WriteOptions,
  ): string[] {
    rt.defaults?.(obj);
    const warnings: string[] = [];
    if (rt.schema) {
      const unknown = prune(obj, rt.schema);
      const reported = unknown.map((f) => `unknown field "${f}"`);
      if (reported.length && opts.fieldValidation === 'Strict')
        throw badRequest(
          `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: strict decoding error: ${reported.join(', ')}`,
        );
      if ((opts.fieldValidation ?? 'Warn') === 'Warn') warnings.push(...reported);
      applyDefaults(obj, rt.schema);
      const errors = validate(obj, rt.schema);
      if (errors.length === 0) errors.push(...validateCel(obj, rt.schema, old));
      if (errors.length) throw invalid(rt.kind, rt.group, obj.metadata.name ?? '', errors);
    }
    const metaErrors = validateMeta(obj, old);
    if (metaErrors.length) throw invalid(rt.kind, rt.group, obj.metadata.name ?? '', metaErrors);
    for (const hook of this.admissionHooks) warnings.push(...(hook(rt, obj, old, opts) ?? []));
    return warnings;
  }

  /**
   * Kind-specific admission (CRD validation and status, admission policies) registered by other
   * modules: each throws to reject the write, or returns warnings for the client.
   */
  readonly admissionHooks: ((
    rt: ResourceType,
    obj: KubeObject,
    old: KubeObject | undefined,
    opts: WriteOptions,
  ) => string[] | void)[] = [];

  /** Admission of a delete (before anything changes): throws to reject it, or returns warnings. */
  readonly deleteHooks: ((
    rt: ResourceType,
    old: KubeObject,
    opts: DeleteOptions,
  ) => string[] | void)[] = [];
}

function validateMeta(obj: KubeObject, _old: KubeObject | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const m = obj.metadata;
  for (const [field, map] of [
    ['labels', m.labels],
    ['annotations', m.annotations],
  ] as const) {
    if (map === undefined || map === null) continue;
    if (!isPlainObject(map))
      errors.push({
        type: 'Invalid',
        field: `metadata.${field}`,
        value: map,
        detail: 'must be a map of strings',
      });
    else
      for (const [k, v] of Object.entries(map))
        if (typeof v !== 'string')
          errors.push({
            type: 'Invalid',
            field: `metadata.${field}.${k}`,
            value: v,
            detail: 'must be a string',
          });
  }
  return errors;
}

/** Everything outside metadata (and status, when it is a subresource) counts for generation. */
function specChanged(rt: ResourceType, old: KubeObject, next: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const { metadata: _m, status, apiVersion: _a, kind: _k, ...rest } = o;
    return rt.statusSubresource ? rest : { ...rest, status };
  };
  return !deepEqual(strip(old), strip(next));
}

function sameOwnership(a: unknown, b: ManagedFieldsEntry[]): boolean {
  const strip = (list: unknown) =>
    ((Array.isArray(list) ? list : []) as ManagedFieldsEntry[]).map(
      ({ time: _t, ...rest }) => rest,
    );
  return deepEqual(strip(a), strip(b));
}

function sameObject(old: KubeObject, next: KubeObject): boolean {
  const strip = (o: KubeObject) => ({
    ...o,
    metadata: { ...o.metadata, resourceVersion: undefined, managedFields: undefined },
  });
  return deepEqual(strip(old), strip(next));
}
