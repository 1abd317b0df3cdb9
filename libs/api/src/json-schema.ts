/**
 * The subset of Kubernetes' JSONSchemaProps (apiextensions.k8s.io/v1) that a structural CRD schema
 * uses. The BackupJob schema is written in this shape directly, so the CRD carries it unchanged.
 */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  title?: string;
  description?: string;
  format?: string;
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  items?: JSONSchemaProps;
  enum?: (string | number | boolean)[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  additionalProperties?: boolean | JSONSchemaProps;
  'x-kubernetes-validations'?: {
    rule: string;
    message: string;
    reason?: string;
    fieldPath?: string;
  }[];
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}
