import { PATCH_TYPES } from '../objects.js';
import type { StoreChange } from '../store.js';
import type { ResourceType } from '../resource-type.js';
import { StoreController } from './queue.js';

/**
 * The namespace controller (docs/concepts/overview/working-with-objects/namespaces/): a
 * terminating namespace has its content deleted (finalizers respected), then its "kubernetes"
 * finalizer is cleared and it goes away.
 */
export class NamespaceLifecycle extends StoreController {
  protected observe({ storageKey, event }: StoreChange): void {
    if (storageKey === '/namespaces') {
      if (event.type !== 'DELETED' && event.obj.metadata.deletionTimestamp)
        this.queue.add(event.obj.metadata.name!);
      return;
    }
    const ns = event.obj.metadata.namespace;
    if (ns && event.type === 'DELETED' && this.terminating(ns)) this.queue.add(ns);
  }

  private terminating(ns: string): boolean {
    return !!this.svc.store.get('/namespaces', '', ns)?.obj.metadata.deletionTimestamp;
  }

  private namespacedStorages(): ResourceType[] {
    const seen = new Map<string, ResourceType>();
    for (const rt of this.svc.registry.all()) {
      if (rt.namespaced && !rt.virtual && !seen.has(rt.storageKey))
        seen.set(rt.storageKey, this.svc.registry.preferred(rt.storageKey) ?? rt);
    }
    return [...seen.values()];
  }

  protected sync(ns: string): void {
    const nsRt = this.builtin('', 'namespaces');
    const namespace = this.svc.find(nsRt, '', ns);
    if (!namespace?.obj.metadata.deletionTimestamp) return;
    let remaining = 0;
    for (const rt of this.namespacedStorages()) {
      for (const s of [...this.svc.store.list(rt.storageKey, ns)]) {
        remaining++;
        if (!s.obj.metadata.deletionTimestamp)
          this.svc.delete(rt, ns, s.obj.metadata.name!, { propagationPolicy: 'Background' });
      }
    }
    if (
      remaining > 0 &&
      [...this.namespacedStorages()].some((rt) => this.svc.store.count(rt.storageKey, ns) > 0)
    )
      return;
    const spec = (namespace.obj.spec ?? {}) as { finalizers?: string[] };
    if ((spec.finalizers ?? []).length === 0) return;
    this.svc.patch(
      nsRt,
      '',
      ns,
      PATCH_TYPES.merge,
      { spec: { finalizers: [] } },
      { subresource: 'finalize', fieldManager: 'namespace-controller' },
    );
  }
}
