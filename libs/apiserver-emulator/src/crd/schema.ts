import type { FieldError } from '../errors.js';
import { clone, isPlainObject } from '../util.js';

/** The structural-schema subset of apiextensions.k8s.io/v1 JSONSchemaProps the emulator honours. */
export interface JSONSchemaProps {
  type?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  items?: JSONSchemaProps;
  additionalProperties?: boolean | JSONSchemaProps;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  uniqueItems?: boolean;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: {
    rule: string;
    message?: string;
    fieldPath?: string;
    reason?: string;
  }[];
}

const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function keepsUnknown(s: JSONSchemaProps): boolean {
  return s['x-kubernetes-preserve-unknown-fields'] === true;
}

/**
 * Field pruning (CRD docs #field-pruning): drops what the schema does not declare and returns
 * the dropped paths, which `fieldValidation` Strict/Warn report as unknown fields.
 */
export function prune(
  value: unknown,
  schema: JSONSchemaProps,
  path = '',
  root = true,
  unknown: string[] = [],
): string[] {
  if (Array.isArray(value)) {
    if (schema.items)
      value.forEach((v, i) => prune(v, schema.items!, `${path}[${i}]`, false, unknown));
    return unknown;
  }
  if (!isPlainObject(value)) return unknown;
  const embedded = root || schema['x-kubernetes-embedded-resource'] === true;
  for (const key of Object.keys(value)) {
    if (embedded && (key === 'apiVersion' || key === 'kind')) continue;
    if (embedded && key === 'metadata') {
      if (isPlainObject(value.metadata))
        pruneMetadata(value.metadata, join(path, 'metadata'), unknown);
      continue;
    }
    const prop = schema.properties?.[key];
    const child =
      prop ??
      (isPlainObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    if (child) {
      if (value[key] === null && !child.nullable && child.default === undefined) {
        delete value[key];
        continue;
      }
      prune(value[key], child, join(path, key), false, unknown);
    } else if (!keepsUnknown(schema) && schema.additionalProperties !== true) {
      unknown.push(join(path, key));
      delete value[key];
    }
  }
  return unknown;
}

function pruneMetadata(meta: Record<string, unknown>, path: string, unknown: string[]): void {
  for (const key of Object.keys(meta)) {
    if (OBJECT_META_FIELDS.has(key)) continue;
    unknown.push(join(path, key));
    delete meta[key];
  }
}

/** Defaulting (CRD docs #defaulting): fills missing properties that declare a default. */
export function applyDefaults(value: unknown, schema: JSONSchemaProps): void {
  if (Array.isArray(value)) {
    if (schema.items) for (const v of value) applyDefaults(v, schema.items);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    if (
      (value[key] === undefined || (value[key] === null && !prop.nullable)) &&
      prop.default !== undefined
    ) {
      value[key] = clone(prop.default);
    }
    if (value[key] !== undefined) applyDefaults(value[key], prop);
  }
  if (isPlainObject(schema.additionalProperties)) {
    for (const key of Object.keys(value)) {
      if (!schema.properties?.[key]) applyDefaults(value[key], schema.additionalProperties);
    }
  }
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(v: unknown, s: JSONSchemaProps): boolean {
  if (s['x-kubernetes-int-or-string']) return typeof v === 'string' || Number.isInteger(v);
  const t = typeName(v);
  switch (s.type) {
    case undefined:
      return true;
    case 'number':
      return t === 'number' || t === 'integer';
    default:
      return t === s.type;
  }
}

function checkScalar(v: unknown, s: JSONSchemaProps, path: string, errors: FieldError[]): void {
  const field = path;
  if (s.enum && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
    errors.push({
      type: 'NotSupported',
      field,
      value: v,
      detail: `supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`,
    });
  }
  if (typeof v === 'number') {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
      errors.push({
        type: 'Invalid',
        field,
        value: v,
        detail: `${field} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`,
      });
    }
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
      errors.push({
        type: 'Invalid',
        field,
        value: v,
        detail: `${field} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`,
      });
    }
    if (s.multipleOf !== undefined && v % s.multipleOf !== 0) {
      errors.push({
        type: 'Invalid',
        field,
        value: v,
        detail: `${field} in body should be a multiple of ${s.multipleOf}`,
      });
    }
  }
  if (typeof v === 'string') {
    const len = [...v].length;
    if (s.maxLength !== undefined && len > s.maxLength) {
      errors.push({
        type: 'TooLong',
        field,
        value: v,
        detail: `may not be more than ${s.maxLength} bytes`,
      });
    }
    if (s.minLength !== undefined && len < s.minLength) {
      errors.push({
        type: 'Invalid',
        field,
        value: v,
        detail: `${field} in body should be at least ${s.minLength} chars long`,
      });
    }
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v)) {
      errors.push({
        type: 'Invalid',
        field,
        value: v,
        detail: `${field} in body should match '${s.pattern}'`,
      });
    }
    if (s.format === 'date-time' && Number.isNaN(Date.parse(v))) {
      errors.push({
        type: 'Invalid',
        field,
        value: v,
        detail: `${field} in body must be of type date-time: ${JSON.stringify(v)}`,
      });
    }
  }
}

function checkArray(v: unknown[], s: JSONSchemaProps, path: string, errors: FieldError[]): void {
  if (s.maxItems !== undefined && v.length > s.maxItems) {
    errors.push({
      type: 'TooMany',
      field: path,
      value: v.length,
      detail: `must have at most ${s.maxItems} items`,
    });
  }
  if (s.minItems !== undefined && v.length < s.minItems) {
    errors.push({
      type: 'Invalid',
      field: path,
      value: v.length,
      detail: `${path} in body should have at least ${s.minItems} items`,
    });
  }
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set' || listType === 'map' || s.uniqueItems) {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    v.forEach((item, i) => {
      const id =
        listType === 'map' && isPlainObject(item)
          ? JSON.stringify(keys.map((k) => item[k]))
          : JSON.stringify(item);
      if (seen.has(id))
        errors.push({ type: 'Duplicate', field: `${path}[${i}]`, value: item, detail: '' });
      seen.add(id);
    });
  }
  if (s.items) v.forEach((item, i) => validate(item, s.items!, `${path}[${i}]`, errors));
}

function checkObject(
  v: Record<string, unknown>,
  s: JSONSchemaProps,
  path: string,
  errors: FieldError[],
): void {
  for (const req of s.required ?? []) {
    if (v[req] === undefined || v[req] === null)
      errors.push({ type: 'Required', field: join(path, req), detail: '' });
  }
  const n = Object.keys(v).length;
  if (s.maxProperties !== undefined && n > s.maxProperties) {
    errors.push({
      type: 'TooMany',
      field: path,
      value: n,
      detail: `must have at most ${s.maxProperties} items`,
    });
  }
  if (s.minProperties !== undefined && n < s.minProperties) {
    errors.push({
      type: 'Invalid',
      field: path,
      value: n,
      detail: `${path} in body should have at least ${s.minProperties} properties`,
    });
  }
  for (const [key, child] of Object.entries(v)) {
    if (path === '' && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    const prop =
      s.properties?.[key] ??
      (isPlainObject(s.additionalProperties) ? s.additionalProperties : undefined);
    if (prop) validate(child, prop, join(path, key), errors);
  }
}

/** Structural-schema validation (CRD docs #validation): returns field errors like the real server. */
export function validate(
  v: unknown,
  s: JSONSchemaProps,
  path = '',
  errors: FieldError[] = [],
): FieldError[] {
  if (v === null) {
    if (!s.nullable && s.type)
      errors.push({
        type: 'Invalid',
        field: path,
        value: v,
        detail: `${path} in body must be of type ${s.type}: "null"`,
      });
    return errors;
  }
  if (!typeMatches(v, s)) {
    const expected = s['x-kubernetes-int-or-string'] ? 'integer or string' : s.type;
    errors.push({
      type: 'Invalid',
      field: path,
      value: v,
      detail: `${path} in body must be of type ${expected}: ${JSON.stringify(typeName(v))}`,
    });
    return errors;
  }
  checkScalar(v, s, path, errors);
  if (Array.isArray(v)) checkArray(v, s, path, errors);
  else if (isPlainObject(v)) checkObject(v, s, path, errors);
  for (const sub of s.allOf ?? []) validate(v, sub, path, errors);
  if (s.anyOf && !s.anyOf.some((sub) => validate(v, sub, path).length === 0)) {
    errors.push({
      type: 'Invalid',
      field: path,
      value: v,
      detail: `${path} in body must match at least one schema in anyOf`,
    });
  }
  if (s.oneOf && s.oneOf.filter((sub) => validate(v, sub, path).length === 0).length !== 1) {
    errors.push({
      type: 'Invalid',
      field: path,
      value: v,
      detail: `${path} in body must match exactly one schema in oneOf`,
    });
  }
  if (s.not && validate(v, s.not, path).length === 0) {
    errors.push({
      type: 'Invalid',
      field: path,
      value: v,
      detail: `${path} in body should not match the schema in not`,
    });
  }
  return errors;
}
