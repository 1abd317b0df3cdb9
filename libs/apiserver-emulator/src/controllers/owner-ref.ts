import type { KubeObject, OwnerReference } from '../types.js';

/** The ownerReference a controller puts on what it creates (controller: true, blocks foreground deletion). */
export function controllerRef(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion!,
    kind: owner.kind!,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}
