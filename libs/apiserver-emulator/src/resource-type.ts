import type { KubeObject } from './types.js';
import type { PrinterColumn } from './table.js';
import type { JSONSchemaProps } from './crd/schema.js';

const ALL_VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

/**
 * One served resource (group/version/plural). Several served resources may share one storage
 * (`storageKey`): core/v1 and events.k8s.io/v1 Events, or the versions of a CRD.
 */
export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
  /** Shared storage of every version that serves the same objects. */
  storageKey: string;
  /** Served through a status subresource: main endpoint ignores status, generation tracks spec. */
  statusSubresource: boolean;
  /** Custom resource: no strategic merge patch, resourceVersion required on update. */
  custom: boolean;
  /** metadata.generation is maintained (CRs and built-ins with a spec). */
  generation: boolean;
  allowUnconditionalUpdate: boolean;
  allowCreateOnUpdate: boolean;
  /** DELETE answers with the deleted object rather than a Status (pods, serviceaccounts …). */
  returnDeletedObject: boolean;
  /** Orphan dependents when a DELETE names no policy (batch/v1 Jobs keep this legacy default). */
  defaultOrphan: boolean;
  /** Extra field selector labels beyond metadata.name/namespace. */
  fieldLabels: Record<string, (obj: KubeObject) => string | undefined>;
  printerColumns?: PrinterColumn[];
  schema?: JSONSchemaProps;
  /** Converts a stored object into this served version (apiVersion is set by the caller). */
  toServed?: (stored: KubeObject) => KubeObject;
  /** Converts a body of this served version into the storage form. */
  toStorage?: (served: KubeObject) => KubeObject;
  /** Fills in defaults the real API server's registry strategy sets. */
  defaults?: (obj: KubeObject) => void;
  /** Non-stored, create-only resources (access reviews): handled by a function. */
  virtual?: boolean;
  /** Extra subresources listed in discovery (beyond status). */
  extraSubresources?: {
    name: string;
    kind: string;
    group?: string;
    version?: string;
    verbs: string[];
  }[];
}

export function apiVersionOf(rt: { group: string; version: string }): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

export function gvrKey(group: string, version: string, plural: string): string {
  return `${group}/${version}/${plural}`;
}

export function resourceType(
  partial: Partial<ResourceType> & Pick<ResourceType, 'group' | 'version' | 'plural' | 'kind'>,
): ResourceType {
  return {
    singular: partial.kind.toLowerCase(),
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    storageKey: `${partial.group}/${partial.plural}`,
    statusSubresource: false,
    custom: false,
    generation: false,
    allowUnconditionalUpdate: true,
    allowCreateOnUpdate: false,
    returnDeletedObject: false,
    defaultOrphan: false,
    fieldLabels: {},
    ...partial,
  };
}
