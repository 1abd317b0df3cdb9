import { PATCH_TYPES } from '../objects.js';
import type { ResourceType } from '../resource-type.js';
import { parseDependentRef, type StoreChange } from '../store.js';
import type { KubeObject, OwnerReference } from '../types.js';
import { StoreController } from './queue.js';

const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';

/**
 * The garbage collector (docs/concepts/architecture/garbage-collection/): deletes dependents
 * whose owners are all gone (background), deletes dependents before a foreground-deleting owner
 * and releases it once no blocking dependent is left, and orphans dependents for the orphan finalizer.
 */
export class GarbageCollector extends StoreController {
  protected observe({ storageKey, event }: StoreChange): void {
    const obj = event.obj;
    const owners = obj.metadata.ownerReferences ?? [];
    if (event.type === 'DELETED') {
      for (const dep of this.svc.store.dependents.get(obj.metadata.uid!) ?? [])
        this.queue.add(`dependent ${dep}`);
      for (const ref of owners) this.queue.add(`owner ${ref.uid}`);
      return;
    }
    if (!obj.metadata.deletionTimestamp) return;
    const f = obj.metadata.finalizers ?? [];
    if (f.includes(FOREGROUND) || f.includes(ORPHAN)) {
      this.queue.add(
        `owner-deleting ${storageKey}\u0000${obj.metadata.namespace ?? ''}\u0000${obj.metadata.name}`,
      );
    }
    for (const ref of owners) this.queue.add(`owner ${ref.uid}`);
  }

  protected sync(key: string): void {
    const [kind, rest] = [key.slice(0, key.indexOf(' ')), key.slice(key.indexOf(' ') + 1)];
    if (kind === 'dependent') this.collectDependent(rest);
    else if (kind === 'owner-deleting') this.processDeletingOwner(rest);
    else this.recheckOwner(rest);
  }

  private ownerAlive(ref: OwnerReference, namespace: string): boolean {
    const rt = this.svc.registry.byKind(ref.apiVersion, ref.kind);
    if (!rt) return true;
    const owner = this.svc.store.get(rt.storageKey, rt.namespaced ? namespace : '', ref.name);
    return !!owner && owner.obj.metadata.uid === ref.uid;
  }

  private resolve(ref: string): { rt: ResourceType; obj: KubeObject } | undefined {
    const { storageKey, namespace, name } = parseDependentRef(ref);
    const stored = this.svc.store.get(storageKey, namespace, name);
    const rt = this.svc.registry.preferred(storageKey);
    return stored && rt ? { rt, obj: stored.obj } : undefined;
  }

  /** Background: a dependent whose owners are all gone is deleted. */
  private collectDependent(ref: string): void {
    const found = this.resolve(ref);
    if (!found || found.obj.metadata.deletionTimestamp) return;
    const ns = found.obj.metadata.namespace ?? '';
    const refs = found.obj.metadata.ownerReferences ?? [];
    if (refs.length === 0 || refs.some((r) => this.ownerAlive(r, ns))) return;
    this.svc.delete(found.rt, ns, found.obj.metadata.name!, { propagationPolicy: 'Background' });
  }

  private processDeletingOwner(ref: string): void {
    const found = this.resolve(ref);
    if (!found) return;
    const { rt, obj } = found;
    const f = obj.metadata.finalizers ?? [];
    const deps = [...(this.svc.store.dependents.get(obj.metadata.uid!) ?? [])];
    if (f.includes(ORPHAN)) {
      for (const d of deps) this.orphan(d, obj.metadata.uid!);
      this.removeFinalizer(rt, obj, ORPHAN);
      return;
    }
    if (!f.includes(FOREGROUND)) return;
    let blocking = 0;
    for (const d of deps) {
      const dep = this.resolve(d);
      if (!dep) continue;
      const refToOwner = dep.obj.metadata.ownerReferences?.find((r) => r.uid === obj.metadata.uid);
      if (refToOwner?.blockOwnerDeletion) blocking++;
      if (!dep.obj.metadata.deletionTimestamp)
        this.svc.delete(dep.rt, dep.obj.metadata.namespace ?? '', dep.obj.metadata.name!, {
          propagationPolicy: 'Foreground',
        });
    }
    if (blocking === 0) this.removeFinalizer(rt, obj, FOREGROUND);
  }

  /** A dependent went away or started deleting: its foreground-deleting owner may be free now. */
  private recheckOwner(uid: string): void {
    const ref = this.svc.store.byUid.get(uid);
    const found = ref ? this.resolve(ref) : undefined;
    if (found?.obj.metadata.deletionTimestamp) this.queue.add(`owner-deleting ${ref}`);
  }

  private orphan(ref: string, ownerUid: string): void {
    const dep = this.resolve(ref);
    if (!dep) return;
    const refs = (dep.obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
    this.patchMeta(dep.rt, dep.obj, { ownerReferences: refs.length ? refs : null });
  }

  private removeFinalizer(rt: ResourceType, obj: KubeObject, finalizer: string): void {
    this.patchMeta(rt, obj, {
      finalizers: (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer),
    });
  }

  private patchMeta(rt: ResourceType, obj: KubeObject, metadata: Record<string, unknown>): void {
    this.svc.patch(
      rt,
      obj.metadata.namespace ?? '',
      obj.metadata.name!,
      PATCH_TYPES.merge,
      { metadata },
      { fieldManager: 'garbage-collector' },
    );
  }
}
