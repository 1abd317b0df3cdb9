import { badRequest } from './errors.js';
import type { DeleteOptions, ObjectService } from './objects.js';
import { PATCH_TYPES } from './objects.js';
import type { ResourceType } from './resource-type.js';
import type { KubeObject } from './types.js';
import { clone } from './util.js';

/**
 * Direct access to the emulator's objects for tests and controllers, with the same semantics as
 * the REST API (validation, resourceVersion, finalizers, watch events) but no HTTP and no request
 * log entry. Everything returned is a copy.
 */
export class ObjectClient {
  constructor(
    private readonly svc: ObjectService,
    private readonly manager = 'emulator',
  ) {}

  resource(apiVersion: string, kind: string): ResourceType {
    const rt = this.svc.registry.byKind(apiVersion, kind);
    if (!rt) throw badRequest(`no matches for kind "${kind}" in version "${apiVersion}"`);
    return rt;
  }

  private out(rt: ResourceType, obj: KubeObject): KubeObject {
    return clone(this.svc.serve(rt, obj));
  }

  create<T extends KubeObject>(obj: T): T {
    const rt = this.resource(obj.apiVersion!, obj.kind!);
    return this.out(
      rt,
      this.svc.create(rt, obj.metadata.namespace ?? '', clone(obj), { fieldManager: this.manager })
        .obj,
    ) as T;
  }

  get<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace = '',
  ): T | undefined {
    const rt = this.resource(apiVersion, kind);
    const s = this.svc.find(rt, namespace, name);
    return s ? (this.out(rt, s.obj) as T) : undefined;
  }

  list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    namespace?: string,
  ): T[] {
    const rt = this.resource(apiVersion, kind);
    return [...this.svc.store.list(rt.storageKey, rt.namespaced ? namespace : undefined)].map(
      (s) => this.out(rt, s.obj) as T,
    );
  }

  /** PUT semantics; pass the object as read (its resourceVersion is the precondition). */
  update<T extends KubeObject>(obj: T, subresource?: 'status'): T {
    const rt = this.resource(obj.apiVersion!, obj.kind!);
    return this.out(
      rt,
      this.svc.update(rt, obj.metadata.namespace ?? '', obj.metadata.name!, clone(obj), {
        fieldManager: this.manager,
        subresource,
      }).obj,
    ) as T;
  }

  /** JSON merge patch (RFC 7386), optionally on the status subresource. */
  patch<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string,
    patch: unknown,
    subresource?: 'status',
  ): T {
    const rt = this.resource(apiVersion, kind);
    return this.out(
      rt,
      this.svc.patch(rt, namespace, name, PATCH_TYPES.merge, clone(patch), {
        fieldManager: this.manager,
        subresource,
      }).obj,
    ) as T;
  }

  /** Returns false when the object did not exist. */
  delete(
    apiVersion: string,
    kind: string,
    name: string,
    namespace = '',
    opts: DeleteOptions = {},
  ): boolean {
    const rt = this.resource(apiVersion, kind);
    if (!this.svc.find(rt, namespace, name)) return false;
    this.svc.delete(rt, namespace, name, opts);
    return true;
  }
}
