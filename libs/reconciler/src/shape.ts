import { specSchema, statusSchema, type BackupJobStatus, type JSONSchemaProps } from '#api';

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(want: JSONSchemaProps['type'], value: unknown): boolean {
  const have = typeOf(value);
  return want === undefined || have === want || (want === 'number' && have === 'integer');
}

function scalarProblems(value: unknown, schema: JSONSchemaProps): string[] {
  const out: string[] = [];
  if (schema.enum && !schema.enum.includes(value as string)) {
    out.push(`must be one of ${schema.enum.join(', ')}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      out.push(`must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum)
      out.push(`must be at most ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      out.push(`must be at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      out.push(`must be at most ${schema.maxLength} characters`);
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value)))
      out.push('must be an RFC 3339 time');
  }
  return out;
}

/**
 * What the CRD schema would have rejected in `value`, each problem with its path. The API server
 * checks this at admission, but an object written under an older or looser CRD, or a status
 * written by someone else, reaches the operator unchecked; reading it as typed would crash.
 * Patterns are left to the checks that follow (validateSpec), whose messages say more.
 */
function schemaProblems(value: unknown, schema: JSONSchemaProps, path: string): string[] {
  if (!typeMatches(schema.type, value)) {
    return [
      `${path}: must be ${schema.type === 'array' || schema.type === 'object' ? 'an' : 'a'} ${schema.type}, not ${typeOf(value)}`,
    ];
  }
  if (Array.isArray(value)) {
    const out: string[] = [];
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      out.push(`${path}: must have at most ${schema.maxItems} items`);
    if (schema.items) {
      value.forEach((item, i) => out.push(...schemaProblems(item, schema.items!, `${path}[${i}]`)));
    }
    return out;
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    const out = (schema.required ?? [])
      .filter((key) => object[key] === undefined)
      .map((key) => `${path}.${key}: is required`);
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      if (object[key] !== undefined)
        out.push(...schemaProblems(object[key], child, `${path}.${key}`));
    }
    return out;
  }
  return scalarProblems(value, schema).map((problem) => `${path}: ${problem}`);
}

export function specProblems(spec: unknown): string[] {
  return schemaProblems(spec, specSchema, 'spec');
}

/**
 * The status with every field the schema would reject left out (and conditions that are not
 * conditions dropped), so the reconciler works from what is sound and its next status write
 * replaces the rest.
 */
export function soundStatus(status: unknown): BackupJobStatus {
  if (typeOf(status) !== 'object') return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(status as Record<string, unknown>)) {
    const schema = statusSchema.properties?.[key];
    if (!schema) continue;
    if (key === 'conditions' && Array.isArray(value)) {
      out[key] = value.filter((c) => schemaProblems(c, schema.items!, key).length === 0);
    } else if (schemaProblems(value, schema, key).length === 0) {
      out[key] = value;
    }
  }
  return out as BackupJobStatus;
}
