import { invalid, type FieldError } from './errors.js';
import type { ObjectService } from './objects.js';
import type { ResourceType } from './resource-type.js';
import { labelSelectorFromObject } from './selectors.js';
import type { KubeObject } from './types.js';
import { isPlainObject } from './util.js';

/**
 * Validation of the built-in kinds this project's operator, chart and user flows write, after the
 * rules of pkg/apis/<group>/validation (names and messages as kube-apiserver reports them). Kinds
 * and fields not covered here are accepted as sent (docs/apiserver-emulator.md lists them).
 */
type Validator = (obj: KubeObject) => FieldError[];

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const required = (field: string, detail = ''): FieldError => ({ type: 'Required', field, detail });
const badValue = (field: string, value: unknown, detail: string): FieldError => ({
  type: 'Invalid',
  field,
  value,
  detail,
});

/** ValidateConfigMapKey / Secret keys: the data keys must be usable as file names and env names. */
function configKeys(field: string, ...maps: unknown[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const map of maps) {
    if (!isPlainObject(map)) continue;
    for (const key of Object.keys(map)) {
      if (key.length <= 253 && CONFIG_KEY.test(key) && key !== '.' && key !== '..') continue;
      errors.push(
        badValue(
          `${field}[${key}]`,
          key,
          "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        ),
      );
    }
  }
  return errors;
}

function containers(list: unknown, field: string): FieldError[] {
  if (!Array.isArray(list) || list.length === 0) return [required(field)];
  const errors: FieldError[] = [];
  list.forEach((c: { name?: unknown; image?: unknown }, i) => {
    const at = `${field}[${i}]`;
    if (!c?.name) errors.push(required(`${at}.name`));
    else if (typeof c.name !== 'string' || !DNS_LABEL.test(c.name) || c.name.length > 63)
      errors.push(
        badValue(
          `${at}.name`,
          c.name,
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        ),
      );
    if (!c?.image) errors.push(required(`${at}.image`));
  });
  return errors;
}

function podSpec(spec: unknown, field: string, restartPolicies?: string[]): FieldError[] {
  const s = (isPlainObject(spec) ? spec : {}) as { containers?: unknown; restartPolicy?: string };
  const errors = containers(s.containers, `${field}.containers`);
  if (restartPolicies && !restartPolicies.includes(s.restartPolicy ?? 'Always'))
    errors.push({
      type: 'NotSupported',
      field: `${field}.restartPolicy`,
      value: s.restartPolicy ?? 'Always',
      detail: `supported values: ${restartPolicies.map((p) => `"${p}"`).join(', ')}`,
    });
  return errors;
}

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Deployments, ReplicaSets, StatefulSets: a non-empty selector that selects the template. */
function replicated(obj: KubeObject): FieldError[] {
  const spec = (obj.spec ?? {}) as {
    replicas?: unknown;
    selector?: Selector;
    template?: { metadata?: { labels?: Record<string, string> }; spec?: unknown };
  };
  const errors: FieldError[] = [];
  if (
    spec.replicas !== undefined &&
    !(Number.isInteger(spec.replicas) && (spec.replicas as number) >= 0)
  )
    errors.push(badValue('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  const sel = spec.selector;
  const empty =
    !sel ||
    (Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0);
  if (empty) errors.push(required('spec.selector'));
  const labels = spec.template?.metadata?.labels ?? {};
  if (empty || !labelSelectorFromObject(sel!)(labels))
    errors.push(
      badValue(
        'spec.template.metadata.labels',
        labels,
        '`selector` does not match template `labels`',
      ),
    );
  errors.push(...podSpec(spec.template?.spec, 'spec.template.spec', ['Always']));
  return errors;
}

function job(obj: KubeObject, prefix = 'spec'): FieldError[] {
  const spec = (obj.spec ?? {}) as { template?: { spec?: unknown } };
  return podSpec(spec.template?.spec, `${prefix}.template.spec`, ['OnFailure', 'Never']);
}

function cronJob(obj: KubeObject): FieldError[] {
  const spec = (obj.spec ?? {}) as { schedule?: unknown; jobTemplate?: { spec?: unknown } };
  const errors: FieldError[] = [];
  if (!spec.schedule) errors.push(required('spec.schedule'));
  errors.push(...job({ metadata: {}, spec: spec.jobTemplate?.spec }, 'spec.jobTemplate.spec'));
  return errors;
}

function service(obj: KubeObject): FieldError[] {
  const spec = (obj.spec ?? {}) as {
    type?: string;
    clusterIP?: string;
    ports?: { port?: unknown }[];
  };
  const errors: FieldError[] = [];
  const ports = spec.ports ?? [];
  if (ports.length === 0 && spec.type !== 'ExternalName' && spec.clusterIP !== 'None')
    errors.push(required('spec.ports'));
  ports.forEach((p, i) => {
    if (!(Number.isInteger(p.port) && (p.port as number) >= 1 && (p.port as number) <= 65535))
      errors.push(
        badValue(`spec.ports[${i}].port`, p.port ?? 0, 'must be between 1 and 65535, inclusive'),
      );
  });
  return errors;
}

function binding(obj: KubeObject): FieldError[] {
  const ref = obj.roleRef as { kind?: string; name?: string } | undefined;
  const errors: FieldError[] = [];
  if (!ref?.name) errors.push(required('roleRef.name'));
  if (!ref?.kind || !['Role', 'ClusterRole'].includes(ref.kind))
    errors.push({
      type: 'NotSupported',
      field: 'roleRef.kind',
      value: ref?.kind ?? '',
      detail: 'supported values: "Role", "ClusterRole"',
    });
  return errors;
}

const VALIDATORS: Record<string, Validator> = {
  '/configmaps': (o) => configKeys('data', o.data).concat(configKeys('binaryData', o.binaryData)),
  '/secrets': (o) => configKeys('data', o.data),
  '/pods': (o) => podSpec(o.spec, 'spec'),
  'apps/deployments': replicated,
  'apps/replicasets': replicated,
  'apps/statefulsets': replicated,
  'batch/jobs': (o) => job(o),
  'batch/cronjobs': cronJob,
  '/services': service,
  'rbac.authorization.k8s.io/rolebindings': binding,
  'rbac.authorization.k8s.io/clusterrolebindings': binding,
};

/** Registers the built-in validators as an admission step of every create and update. */
export function installBuiltinValidation(svc: ObjectService): void {
  svc.admissionHooks.push((rt: ResourceType, obj: KubeObject) => {
    if (rt.custom) return;
    const errors = VALIDATORS[rt.storageKey]?.(obj) ?? [];
    if (errors.length) throw invalid(rt.kind, rt.group, obj.metadata.name ?? '', errors);
  });
}
