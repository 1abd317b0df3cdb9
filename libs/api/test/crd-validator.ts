import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { JSONSchemaProps } from '../src/json-schema.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives as the module namespace.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Turns the CRD's structural schema into a JSON Schema that rejects unknown fields, as the API server
 * does under fieldValidation=Strict (kubectl's default): every object with properties and no
 * preserve-unknown-fields gets additionalProperties: false. metadata is left to the API server.
 */
function strict(schema: JSONSchemaProps, isRoot = true): JSONSchemaProps {
  const out: JSONSchemaProps = { ...schema };
  if (schema.properties) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([k, v]) => [
        k,
        k === 'metadata' && isRoot ? v : strict(v, false),
      ]),
    );
    if (!schema['x-kubernetes-preserve-unknown-fields']) out.additionalProperties = false;
  }
  if (schema.items) out.items = strict(schema.items, false);
  return out;
}

/** `spec.retentionDays` style path of an ajv error, the way the API server names fields. */
function fieldOf(error: ErrorObject): string {
  const base = error.instancePath.split('/').filter(Boolean).join('.');
  const extra =
    error.keyword === 'required'
      ? (error.params as { missingProperty: string }).missingProperty
      : error.keyword === 'additionalProperties'
        ? (error.params as { additionalProperty: string }).additionalProperty
        : '';
  return [base, extra].filter(Boolean).join('.');
}

export interface Validation {
  valid: boolean;
  errors: string[];
}

/** A validator for BackupJobs built from the generated CRD file, the artefact users install. */
export function crdValidator(crdPath: string): (object: unknown) => Validation {
  const crd = parse(readFileSync(crdPath, 'utf8'));
  const schema = strict(crd.spec.versions[0].schema.openAPIV3Schema as JSONSchemaProps);
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  return (object) => {
    const valid = validate(object) as boolean;
    return {
      valid,
      errors: (validate.errors ?? []).map((e) => `${fieldOf(e)}: ${e.message ?? e.keyword}`),
    };
  };
}
