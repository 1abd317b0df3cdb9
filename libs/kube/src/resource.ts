/** Where a namespaced resource type lives in the REST API (client-go's GroupVersionResource). */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export const CRONJOBS: ResourceType = { group: 'batch', version: 'v1', plural: 'cronjobs' };
export const JOBS: ResourceType = { group: 'batch', version: 'v1', plural: 'jobs' };
export const LEASES: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
};

/** The collection path, across all namespaces when `namespace` is empty or undefined. */
export function collectionPath(type: ResourceType, namespace?: string): string {
  const root = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  const scope = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${root}${scope}/${type.plural}`;
}

export function objectPath(type: ResourceType, namespace: string, name: string): string {
  return `${collectionPath(type, namespace)}/${encodeURIComponent(name)}`;
}

export function describe(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

/**
 * Accept headers that ask for PartialObjectMetadata (what client-go's metadata informers send),
 * with plain JSON after them so a server without the conversion still answers, with full objects.
 */
export const METADATA_LIST_ACCEPT =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
export const METADATA_WATCH_ACCEPT =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
