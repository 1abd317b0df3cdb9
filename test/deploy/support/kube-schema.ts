import * as k8s from '@kubernetes/client-node';
import type { KubeObject } from './helm.js';

/**
 * Offline checks of rendered manifests against the Kubernetes API schemas, as strict as the API
 * server's strict field validation: types, required fields and enums from kubernetes-models, and
 * unknown or mis-indented fields from the @kubernetes/client-node model maps (which
 * kubernetes-models lets through). Custom resources of other projects get the kubernetes-models
 * check only.
 */

/**
 * apiVersions the chart may use: all are served by every Kubernetes in Chart.yaml's kubeVersion,
 * except admissionregistration.k8s.io/v1's policies, which the chart renders only where served.
 */
const MODEL_PACKAGES: Readonly<Record<string, string>> = {
  v1: 'kubernetes-models/v1',
  'apps/v1': 'kubernetes-models/apps/v1',
  'rbac.authorization.k8s.io/v1': 'kubernetes-models/rbac.authorization.k8s.io/v1',
  'policy/v1': 'kubernetes-models/policy/v1',
  'networking.k8s.io/v1': 'kubernetes-models/networking.k8s.io/v1',
  'autoscaling/v2': 'kubernetes-models/autoscaling/v2',
  'apiextensions.k8s.io/v1': 'kubernetes-models/apiextensions.k8s.io/v1',
  'admissionregistration.k8s.io/v1': 'kubernetes-models/admissionregistration.k8s.io/v1',
  'monitoring.coreos.com/v1': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
  'keda.sh/v1alpha1': '@kubernetes-models/keda/keda.sh/v1alpha1',
};
const CUSTOM_GROUPS = new Set(['monitoring.coreos.com', 'keda.sh']);

interface Attribute {
  baseName: string;
  type: string;
}
type ModelClass = { attributeTypeMap?: Attribute[]; getAttributeTypeMap?: () => Attribute[] };
const models = k8s as unknown as Record<string, ModelClass | undefined>;

/** Kubernetes accepts numbers for resource quantities although the models type them as strings. */
const QUANTITY_FIELDS = new Set(['limits', 'requests', 'sizeLimit']);

/** Every problem found in one object, each prefixed with the object and the field path. */
export async function validateObject(object: KubeObject): Promise<string[]> {
  const id = `${object.kind}/${object.metadata?.name}`;
  const packagePath = MODEL_PACKAGES[object.apiVersion];
  if (packagePath === undefined)
    return [`${id}: apiVersion ${object.apiVersion} is not one the chart may use`];
  const problems: string[] = [];
  const module = (await import(`${packagePath}/${object.kind}`).catch(() => undefined)) as
    Record<string, new (data: unknown) => { validate(): void }> | undefined;
  const Model = module?.[object.kind];
  if (!Model) return [`${id}: ${object.apiVersion} has no kind ${object.kind}`];
  try {
    new Model(object).validate();
  } catch (error) {
    problems.push(`${id}: ${(error as Error).message}`);
  }
  const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
  if (!CUSTOM_GROUPS.has(group)) {
    const version = object.apiVersion.split('/').pop()!;
    const className = `${version[0]!.toUpperCase()}${version.slice(1)}${object.kind}`;
    if (!models[className]) problems.push(`${id}: no client-node model ${className}`);
    else walk(object, className, '', problems);
  }
  return problems.map((p) => (p.startsWith(id) ? p : `${id}: ${p}`));
}

function attributes(model: ModelClass): Attribute[] {
  return model.getAttributeTypeMap?.() ?? model.attributeTypeMap ?? [];
}

function walk(value: unknown, type: string, path: string, problems: string[], field = ''): void {
  const at = path || '.';
  if (value === null || value === undefined) {
    problems.push(`${at}: null (an empty template value?)`);
    return;
  }
  const array = /^Array<(.+)>$/.exec(type);
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) problems.push(`${at}: expected a list`);
    else value.forEach((item, i) => walk(item, array[1]!, `${path}[${i}]`, problems, field));
  } else if (map) {
    if (!isPlainObject(value)) problems.push(`${at}: expected a map`);
    else
      for (const [k, v] of Object.entries(value)) walk(v, map[1]!, `${path}.${k}`, problems, field);
  } else if (type === 'string' || type === 'Date') {
    const quantity = QUANTITY_FIELDS.has(field) && typeof value === 'number';
    if (typeof value !== 'string' && !quantity)
      problems.push(`${at}: expected a string, got ${JSON.stringify(value)}`);
  } else if (type === 'number') {
    if (typeof value !== 'number')
      problems.push(`${at}: expected a number, got ${JSON.stringify(value)}`);
  } else if (type === 'boolean') {
    if (typeof value !== 'boolean')
      problems.push(`${at}: expected a boolean, got ${JSON.stringify(value)}`);
  } else if (type === 'IntOrString') {
    if (typeof value !== 'string' && typeof value !== 'number')
      problems.push(`${at}: expected an int or a string`);
  } else if (type !== 'object' && type !== 'any') {
    walkModel(value, type, path, problems);
  }
}

function walkModel(value: unknown, type: string, path: string, problems: string[]): void {
  const model = models[type];
  if (!model) {
    problems.push(`${path || '.'}: no client-node model ${type}`);
    return;
  }
  if (!isPlainObject(value)) {
    problems.push(`${path || '.'}: expected an object (${type})`);
    return;
  }
  const known = new Map(attributes(model).map((a) => [a.baseName, a.type]));
  for (const [key, child] of Object.entries(value)) {
    const childType = known.get(key);
    if (childType === undefined) problems.push(`${path}.${key}: unknown field`);
    else walk(child, childType, `${path}.${key}`, problems, key);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * What the API server checks beyond the schema and the schema packages cannot: object names,
 * and references between the rendered objects (selectors that select, bindings that bind).
 */
export function crossCheck(
  objects: readonly KubeObject[],
  externalServiceAccounts: readonly string[] = [],
): string[] {
  const problems: string[] = [];
  const podLabels = objects
    .filter((o) => o.kind === 'Deployment')
    .map((o) => (o as unknown as DeploymentLike).spec.template.metadata.labels);
  for (const object of objects) {
    const id = `${object.kind}/${object.metadata.name}`;
    const nameRule = object.kind === 'Service' ? DNS_LABEL : DNS_SUBDOMAIN;
    if (!nameRule.test(object.metadata.name)) problems.push(`${id}: invalid name`);
    if (object.kind === 'Deployment') {
      const { spec } = object as unknown as DeploymentLike;
      if (!matches(spec.selector.matchLabels, spec.template.metadata.labels)) {
        problems.push(`${id}: selector does not match the pod template labels`);
      }
    }
    const selector = selectorOf(object);
    if (selector && !podLabels.some((labels) => matches(selector, labels))) {
      problems.push(`${id}: selects no pod of the chart`);
    }
    if (object.kind === 'RoleBinding' || object.kind === 'ClusterRoleBinding') {
      problems.push(...bindingProblems(object, objects, externalServiceAccounts));
    }
  }
  return problems;
}

interface DeploymentLike {
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> } };
  };
}

function selectorOf(object: KubeObject): Record<string, string> | undefined {
  const spec = object.spec as Record<string, unknown> | undefined;
  if (object.kind === 'Service') return spec?.selector as Record<string, string>;
  if (object.kind === 'PodDisruptionBudget')
    return (spec?.selector as DeploymentLike['spec']['selector']).matchLabels;
  if (object.kind === 'NetworkPolicy')
    return (spec?.podSelector as DeploymentLike['spec']['selector']).matchLabels;
  return undefined;
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

function bindingProblems(
  binding: KubeObject,
  objects: readonly KubeObject[],
  externalServiceAccounts: readonly string[],
): string[] {
  const id = `${binding.kind}/${binding.metadata.name}`;
  const roleRef = binding.roleRef as { kind: string; name: string };
  const subjects = binding.subjects as { kind: string; name: string; namespace: string }[];
  const problems: string[] = [];
  const role = objects.find(
    (o) =>
      o.kind === roleRef.kind &&
      o.metadata.name === roleRef.name &&
      (roleRef.kind === 'ClusterRole' || o.metadata.namespace === binding.metadata.namespace),
  );
  if (!role) problems.push(`${id}: roleRef ${roleRef.kind}/${roleRef.name} is not rendered`);
  for (const subject of subjects) {
    const account = objects.find(
      (o) =>
        o.kind === 'ServiceAccount' &&
        o.metadata.name === subject.name &&
        o.metadata.namespace === subject.namespace,
    );
    if (
      subject.kind !== 'ServiceAccount' ||
      (!account && !externalServiceAccounts.includes(subject.name))
    ) {
      problems.push(
        `${id}: subject ${subject.kind}/${subject.namespace}/${subject.name} is not rendered`,
      );
    }
  }
  return problems;
}
