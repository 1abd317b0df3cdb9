import { parse } from '@marcbachmann/cel-js';
import type { FieldError } from '../errors.js';
import { isPlainObject } from '../util.js';
import type { JSONSchemaProps } from './schema.js';

type Program = ReturnType<typeof parse>;
const programs = new Map<string, Program>();

function compile(rule: string): Program {
  let p = programs.get(rule);
  if (!p) {
    p = parse(rule);
    programs.set(rule, p);
  }
  return p;
}

const REASONS: Record<string, FieldError['type']> = {
  FieldValueInvalid: 'Invalid',
  FieldValueForbidden: 'Forbidden',
  FieldValueRequired: 'Required',
  FieldValueDuplicate: 'Duplicate',
};

/** CEL sees `integer` schema values as int (BigInt in the evaluator), everything else as JSON. */
function toCel(value: unknown, s: JSONSchemaProps | undefined): unknown {
  if (typeof value === 'number' && Number.isInteger(value) && s?.type === 'integer')
    return BigInt(value);
  if (Array.isArray(value)) return value.map((v) => toCel(v, s?.items));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = toCel(
        v,
        s?.properties?.[k] ??
          (isPlainObject(s?.additionalProperties) ? s.additionalProperties : undefined),
      );
    }
    return out;
  }
  return value;
}

function typeName(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (isPlainObject(v)) return 'object';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function check(
  value: unknown,
  old: unknown,
  s: JSONSchemaProps,
  path: string,
  errors: FieldError[],
): void {
  for (const v of s['x-kubernetes-validations'] ?? []) {
    const transition = /\boldSelf\b/.test(v.rule);
    if (transition && old === undefined) continue;
    const ctx = { self: toCel(value, s), oldSelf: toCel(old, s) };
    const field = v.fieldPath ? `${path}${v.fieldPath}` : path;
    let ok: unknown;
    try {
      ok = compile(v.rule)(ctx);
    } catch (e) {
      errors.push({
        type: 'Invalid',
        field,
        value: typeName(value),
        detail: `${v.rule}: ${(e as Error).message}`,
      });
      continue;
    }
    if (ok !== true) {
      const detail = v.message ?? `failed rule: ${v.rule}`;
      errors.push({
        type: REASONS[v.reason ?? ''] ?? 'Invalid',
        field,
        value: typeName(value),
        detail,
      });
    }
  }
  if (Array.isArray(value) && s.items) {
    value.forEach((item, i) => check(item, undefined, s.items!, `${path}[${i}]`, errors));
  } else if (isPlainObject(value)) {
    const oldObj = isPlainObject(old) ? old : undefined;
    for (const [k, child] of Object.entries(value)) {
      const cs =
        s.properties?.[k] ??
        (isPlainObject(s.additionalProperties) ? s.additionalProperties : undefined);
      if (cs) check(child, oldObj?.[k], cs, join(path, k), errors);
    }
  }
}

/**
 * `x-kubernetes-validations` (CRD docs #validation-rules): each rule is evaluated with `self`
 * (and `oldSelf` for transition rules, only on update); a false result is a field error.
 */
export function validateCel(obj: unknown, schema: JSONSchemaProps, old: unknown): FieldError[] {
  const errors: FieldError[] = [];
  check(obj, old, schema, '', errors);
  return errors;
}
