import { evalJsonPath } from './jsonpath.js';
import type { KubeObject } from './types.js';

/** A column of a meta.k8s.io/v1 Table: from a CRD's additionalPrinterColumns or a built-in printer. */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath?: string;
  cell?: (obj: KubeObject, now: number) => unknown;
}

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (h < 24 * 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (h < 24 * 365 * 2) return `${d}d`;
  const y = Math.floor(d / 365);
  if (h < 24 * 365 * 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
  return `${y}y`;
}

export function age(timestamp: unknown, now: number): string | null {
  if (typeof timestamp !== 'string') return null;
  return humanDuration(now - Date.parse(timestamp));
}

export const NAME_COLUMN: PrinterColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  cell: (o) => o.metadata.name,
};

export const AGE_COLUMN: PrinterColumn = {
  name: 'Age',
  type: 'date',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created.',
  cell: (o, now) => age(o.metadata.creationTimestamp, now),
};

/** The generic convertor's default (what `kubectl get crd` shows as CREATED AT). */
export const CREATED_AT_COLUMN: PrinterColumn = {
  name: 'Created At',
  type: 'date',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created.',
  cell: (o) => o.metadata.creationTimestamp,
};

function cellFor(col: PrinterColumn, obj: KubeObject, now: number): unknown {
  if (col.cell) return col.cell(obj, now) ?? null;
  const values = evalJsonPath(obj, col.jsonPath ?? '');
  if (values.length === 0) return null;
  if (col.type === 'date') return age(values[0], now);
  if (values.length > 1)
    return values.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(',');
  const v = values[0];
  if (typeof v === 'object' && v !== null) return JSON.stringify(v);
  if (col.type === 'string' && typeof v !== 'string') return String(v);
  return v;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

function rowObject(obj: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  const { managedFields: _managed, ...metadata } = obj.metadata;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
}

export function columnDefinitions(columns: PrinterColumn[]): unknown[] {
  return columns.map((c) => ({
    name: c.name,
    type: c.type,
    format: c.format ?? '',
    description: c.description ?? '',
    priority: c.priority ?? 0,
  }));
}

export function tableRows(
  columns: PrinterColumn[],
  objects: KubeObject[],
  now: number,
  include: IncludeObject,
): unknown[] {
  return objects.map((obj) => {
    const row: Record<string, unknown> = { cells: columns.map((c) => cellFor(c, obj, now)) };
    const object = rowObject(obj, include);
    if (object) row.object = object;
    return row;
  });
}

export function table(
  columns: PrinterColumn[],
  objects: KubeObject[],
  listMeta: Record<string, unknown>,
  now: number,
  include: IncludeObject,
  withColumnDefinitions = true,
): Record<string, unknown> {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: withColumnDefinitions ? columnDefinitions(columns) : [],
    rows: tableRows(columns, objects, now, include),
  };
}
