import { invalid } from '../errors.js';
import type { ObjectService } from '../objects.js';
import type { ResourceType } from '../resource-type.js';
import type { KubeObject } from '../types.js';
import {
  CRD_STORAGE,
  compareVersions,
  crdStatus,
  defaultCrd,
  resourceTypesFromCrd,
  validateCrd,
} from './definitions.js';

/**
 * Serves custom resources as their CRDs come and go (CRD docs #create-a-customresourcedefinition):
 * a new CRD is established at once, a deleted one takes its objects with it.
 */
export function installCrdRegistrar(svc: ObjectService): void {
  const { registry, store } = svc;
  svc.admissionHooks.push((rt: ResourceType, obj: KubeObject) => {
    if (rt.storageKey !== CRD_STORAGE) return;
    defaultCrd(obj);
    const errors = validateCrd(obj);
    if (errors.length) throw invalid(rt.kind, rt.group, obj.metadata.name ?? '', errors);
    obj.status = crdStatus(obj, svc.clock.now());
  });
  const served = new Map<string, ResourceType[]>();
  const unregister = (name: string) => {
    for (const rt of served.get(name) ?? []) registry.remove(rt.group, rt.version, rt.plural);
    served.delete(name);
  };
  store.onChange(({ storageKey, event }) => {
    if (storageKey !== CRD_STORAGE) return;
    const name = event.obj.metadata.name!;
    const before = served.get(name)?.[0]?.storageKey;
    unregister(name);
    if (event.type === 'DELETED') {
      if (before) store.drop(before);
      return;
    }
    const rts = resourceTypesFromCrd(event.obj).sort((a, b) =>
      compareVersions(a.version, b.version),
    );
    rts.forEach((rt, i) => registry.add(rt, i));
    served.set(name, rts);
  });
}
