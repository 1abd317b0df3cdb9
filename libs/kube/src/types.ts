/**
 * The slice of Kubernetes object shape the watcher reads. Every informer stores objects of at
 * least this shape, whether the server sent full objects or PartialObjectMetadata.
 */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: string;
  readonly apiVersion?: string;
  readonly time?: string;
  readonly fieldsType?: string;
  readonly fieldsV1?: unknown;
  readonly subresource?: string;
}

export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly finalizers?: readonly string[];
  readonly ownerReferences?: readonly OwnerReference[];
  readonly managedFields?: readonly ManagedFieldsEntry[];
}

export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
}

export interface ListMeta {
  readonly resourceVersion?: string;
  readonly continue?: string;
}

export interface KubeList<T> {
  readonly metadata?: ListMeta;
  readonly items?: readonly T[];
}

/** The `namespace/name` key the queue carries, client-go's MetaNamespaceKeyFunc. */
export function objectKey(obj: KubeObject): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name ?? ''}` : (name ?? '');
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: '', name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
