import type { FieldError } from '../errors.js';
import { resourceType, type ResourceType } from '../resource-type.js';
import { AGE_COLUMN, NAME_COLUMN, type PrinterColumn } from '../table.js';
import type { KubeObject } from '../types.js';
import { rfc3339 } from '../util.js';
import type { JSONSchemaProps } from './schema.js';

export const CRD_STORAGE = 'apiextensions.k8s.io/customresourcedefinitions';

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: { status?: object; scale?: object };
  additionalPrinterColumns?: {
    name: string;
    type: string;
    format?: string;
    description?: string;
    priority?: number;
    jsonPath: string;
  }[];
  selectableFields?: { jsonPath: string }[];
}

interface CrdNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface CrdSpec {
  group: string;
  names: CrdNames;
  scope: 'Namespaced' | 'Cluster';
  versions: CrdVersion[];
}

function specOf(crd: KubeObject): CrdSpec {
  return crd.spec as CrdSpec;
}

/** Kubernetes version priority (v1 > v1beta2 > v1beta1 > v1alpha1 > other), for preferred versions. */
function versionPriority(v: string): [number, number, number] {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return [0, 0, 0];
  const level = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
  return [level, Number(m[1]), Number(m[3] ?? 0)];
}

export function compareVersions(a: string, b: string): number {
  const pa = versionPriority(a);
  const pb = versionPriority(b);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pb[i]! - pa[i]!;
  return a.localeCompare(b);
}

/** CRD selectableFields / printer columns hold JSONPaths like `.spec.target`. */
function pathGetter(jsonPath: string): (o: KubeObject) => string | undefined {
  const parts = jsonPath.replace(/^\./, '').split('.');
  return (o) => {
    let cur: unknown = o;
    for (const p of parts)
      cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[p] : undefined;
    return cur === undefined || cur === null ? undefined : String(cur);
  };
}

function columns(v: CrdVersion): PrinterColumn[] {
  const cols = v.additionalPrinterColumns;
  if (!cols?.length) return [NAME_COLUMN, AGE_COLUMN];
  return [NAME_COLUMN, ...cols.map((c) => ({ ...c }))];
}

/** The served resources one CRD defines (one per served version). */
export function resourceTypesFromCrd(crd: KubeObject): ResourceType[] {
  const spec = specOf(crd);
  return spec.versions
    .filter((v) => v.served !== false)
    .map((v) =>
      resourceType({
        group: spec.group,
        version: v.name,
        plural: spec.names.plural,
        singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
        kind: spec.names.kind,
        namespaced: spec.scope !== 'Cluster',
        shortNames: spec.names.shortNames ?? [],
        categories: spec.names.categories ?? [],
        storageKey: `${spec.group}/${spec.names.plural}`,
        statusSubresource: v.subresources?.status !== undefined,
        custom: true,
        generation: true,
        allowUnconditionalUpdate: false,
        printerColumns: columns(v),
        schema: v.schema?.openAPIV3Schema,
        fieldLabels: Object.fromEntries(
          (v.selectableFields ?? []).map((f) => [
            f.jsonPath.replace(/^\./, ''),
            pathGetter(f.jsonPath),
          ]),
        ),
      }),
    );
}

/** Minimal apiextensions validation: what a wrong CRD file most often gets wrong. */
export function validateCrd(crd: KubeObject): FieldError[] {
  const spec = crd.spec as Partial<CrdSpec> | undefined;
  const errors: FieldError[] = [];
  if (!spec?.group) errors.push({ type: 'Required', field: 'spec.group', detail: '' });
  if (!spec?.names?.plural)
    errors.push({ type: 'Required', field: 'spec.names.plural', detail: '' });
  if (!spec?.names?.kind) errors.push({ type: 'Required', field: 'spec.names.kind', detail: '' });
  if (spec?.scope !== 'Namespaced' && spec?.scope !== 'Cluster') {
    errors.push({
      type: 'NotSupported',
      field: 'spec.scope',
      value: spec?.scope ?? '',
      detail: 'supported values: "Cluster", "Namespaced"',
    });
  }
  if (!spec?.versions?.length)
    errors.push({
      type: 'Required',
      field: 'spec.versions',
      detail: 'must have exactly one version marked as storage version',
    });
  else if (spec.versions.filter((v) => v.storage).length !== 1) {
    errors.push({
      type: 'Invalid',
      field: 'spec.versions',
      value: spec.versions.map((v) => v.name),
      detail: 'must have exactly one version marked as storage version',
    });
  }
  if (
    spec?.group &&
    spec.names?.plural &&
    crd.metadata.name !== `${spec.names.plural}.${spec.group}`
  ) {
    errors.push({
      type: 'Invalid',
      field: 'metadata.name',
      value: crd.metadata.name,
      detail: `must be spec.names.plural+"."+spec.group`,
    });
  }
  return errors;
}

/** What the CRD controllers write at once on a real server: names accepted, established. */
export function crdStatus(crd: KubeObject, now: number): Record<string, unknown> {
  const spec = specOf(crd);
  const old = (crd.status ?? {}) as {
    conditions?: { type: string; lastTransitionTime?: string }[];
    storedVersions?: string[];
  };
  const since = (type: string) =>
    old.conditions?.find((c) => c.type === type)?.lastTransitionTime ?? rfc3339(now);
  const storage = spec.versions.find((v) => v.storage)?.name;
  const stored = new Set(old.storedVersions ?? []);
  if (storage) stored.add(storage);
  return {
    acceptedNames: {
      ...spec.names,
      listKind: spec.names.listKind ?? `${spec.names.kind}List`,
      singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
    },
    conditions: [
      {
        type: 'NamesAccepted',
        status: 'True',
        reason: 'NoConflicts',
        message: 'no conflicts found',
        lastTransitionTime: since('NamesAccepted'),
      },
      {
        type: 'Established',
        status: 'True',
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
        lastTransitionTime: since('Established'),
      },
    ],
    storedVersions: [...stored],
  };
}

export function defaultCrd(crd: KubeObject): void {
  const spec = specOf(crd);
  if (!spec?.names?.kind) return;
  spec.names.singular ??= spec.names.kind.toLowerCase();
  spec.names.listKind ??= `${spec.names.kind}List`;
  (spec as unknown as Record<string, unknown>).conversion ??= { strategy: 'None' };
}
