import { coreToEventsV1, eventsV1ToCore } from './events.js';
import { resourceType, type ResourceType } from './resource-type.js';
import { AGE_COLUMN, CREATED_AT_COLUMN, NAME_COLUMN, age, type PrinterColumn } from './table.js';
import type { KubeObject } from './types.js';
import { getPath } from './util.js';

function at(obj: KubeObject, ...path: string[]): unknown {
  return getPath(obj, path);
}

function str(obj: KubeObject, ...path: string[]): string | undefined {
  const v = at(obj, ...path);
  return v === undefined || v === null ? undefined : String(v);
}

function col(
  name: string,
  cell: PrinterColumn['cell'],
  type = 'string',
  priority = 0,
): PrinterColumn {
  return { name, type, cell, priority };
}

function count(v: unknown): number {
  return v && typeof v === 'object' ? Object.keys(v).length : 0;
}

function setDefault(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (obj[key] === undefined) obj[key] = value;
}

function specOf(obj: KubeObject): Record<string, unknown> {
  if (!obj.spec || typeof obj.spec !== 'object') obj.spec = {};
  return obj.spec as Record<string, unknown>;
}

const involved = (f: string) => (o: KubeObject) => str(o, 'involvedObject', f);
const eventFieldLabels: ResourceType['fieldLabels'] = {
  'involvedObject.kind': involved('kind'),
  'involvedObject.namespace': involved('namespace'),
  'involvedObject.name': involved('name'),
  'involvedObject.uid': involved('uid'),
  'involvedObject.apiVersion': involved('apiVersion'),
  'involvedObject.resourceVersion': involved('resourceVersion'),
  'involvedObject.fieldPath': involved('fieldPath'),
  reason: (o) => str(o, 'reason'),
  reportingComponent: (o) => str(o, 'reportingComponent') ?? '',
  source: (o) => str(o, 'source', 'component'),
  type: (o) => str(o, 'type'),
};

function jobStatusText(o: KubeObject): string {
  const conditions =
    (at(o, 'status', 'conditions') as { type: string; status: string }[] | undefined) ?? [];
  const has = (t: string) => conditions.some((c) => c.type === t && c.status === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (has('FailureTarget')) return 'FailureTarget';
  if (has('SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  if (at(o, 'spec', 'suspend') === true) return 'Suspended';
  return 'Running';
}

function jobDuration(o: KubeObject, now: number): string | null {
  const start = str(o, 'status', 'startTime');
  if (!start) return null;
  const end = str(o, 'status', 'completionTime');
  return age(start, end ? Date.parse(end) : now);
}

function podReady(o: KubeObject): string {
  const containers = (at(o, 'spec', 'containers') as unknown[] | undefined) ?? [];
  const statuses =
    (at(o, 'status', 'containerStatuses') as { ready?: boolean }[] | undefined) ?? [];
  return `${statuses.filter((s) => s.ready).length}/${containers.length}`;
}

/** stringData is write-only: the API server folds it into data, base64-encoded, and drops it. */
function secretDefaults(obj: KubeObject): void {
  setDefault(obj, 'type', 'Opaque');
  const stringData = obj.stringData as Record<string, string> | undefined;
  if (!stringData) return;
  const data = (obj.data ?? {}) as Record<string, string>;
  for (const [key, value] of Object.entries(stringData))
    data[key] = Buffer.from(value).toString('base64');
  obj.data = data;
  delete obj.stringData;
}

function jobDefaults(obj: KubeObject): void {
  const spec = specOf(obj);
  setDefault(spec, 'backoffLimit', 6);
  setDefault(spec, 'completions', 1);
  setDefault(spec, 'parallelism', 1);
  setDefault(spec, 'completionMode', 'NonIndexed');
  setDefault(spec, 'suspend', false);
  setDefault(spec, 'podReplacementPolicy', 'TerminatingOrFailed');
  setDefault(spec, 'manualSelector', false);
  const uid = obj.metadata.uid ?? '';
  const name = obj.metadata.name ?? '';
  const labels = {
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': name,
    'controller-uid': uid,
    'job-name': name,
  };
  if (!spec.selector)
    spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
  const template = (spec.template ??= {}) as Record<string, unknown>;
  const meta = (template.metadata ??= {}) as Record<string, unknown>;
  meta.labels = { ...(meta.labels as object | undefined), ...labels };
}

function cronJobDefaults(obj: KubeObject): void {
  const spec = specOf(obj);
  setDefault(spec, 'concurrencyPolicy', 'Allow');
  setDefault(spec, 'suspend', false);
  setDefault(spec, 'successfulJobsHistoryLimit', 3);
  setDefault(spec, 'failedJobsHistoryLimit', 1);
}

function workload(group: string, plural: string, kind: string, shortNames: string[]): ResourceType {
  return resourceType({
    group,
    version: 'v1',
    plural,
    kind,
    shortNames,
    categories: ['all'],
    statusSubresource: true,
    generation: true,
  });
}

const namespaced = true;
const cluster = false;

export function builtinResources(): ResourceType[] {
  const core = (plural: string, kind: string, extra: Partial<ResourceType> = {}) =>
    resourceType({ group: '', version: 'v1', plural, kind, ...extra });
  const rbac = (plural: string, kind: string, isNamespaced: boolean) =>
    resourceType({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      plural,
      kind,
      namespaced: isNamespaced,
      printerColumns: [NAME_COLUMN, CREATED_AT_COLUMN],
    });
  const review = (group: string, plural: string, kind: string, isNamespaced = false) =>
    resourceType({
      group,
      version: 'v1',
      plural,
      kind,
      namespaced: isNamespaced,
      verbs: ['create'],
      virtual: true,
    });

  return [
    core('namespaces', 'Namespace', {
      namespaced: cluster,
      shortNames: ['ns'],
      statusSubresource: true,
      fieldLabels: { 'status.phase': (o) => str(o, 'status', 'phase') },
      printerColumns: [NAME_COLUMN, col('Status', (o) => str(o, 'status', 'phase')), AGE_COLUMN],
      extraSubresources: [{ name: 'finalize', kind: 'Namespace', verbs: ['update'] }],
      defaults: (o) => {
        specOf(o).finalizers ??= ['kubernetes'];
        o.status ??= { phase: 'Active' };
        o.metadata.labels = {
          ...o.metadata.labels,
          'kubernetes.io/metadata.name': o.metadata.name!,
        };
      },
    }),
    core('configmaps', 'ConfigMap', {
      shortNames: ['cm'],
      printerColumns: [
        NAME_COLUMN,
        col('Data', (o) => count(o.data) + count(o.binaryData), 'integer'),
        AGE_COLUMN,
      ],
    }),
    core('secrets', 'Secret', {
      fieldLabels: { type: (o) => str(o, 'type') },
      printerColumns: [
        NAME_COLUMN,
        col('Type', (o) => str(o, 'type')),
        col('Data', (o) => count(o.data), 'integer'),
        AGE_COLUMN,
      ],
      defaults: secretDefaults,
    }),
    core('serviceaccounts', 'ServiceAccount', {
      shortNames: ['sa'],
      returnDeletedObject: true,
      printerColumns: [
        NAME_COLUMN,
        col('Secrets', (o) => (Array.isArray(o.secrets) ? o.secrets.length : 0), 'integer'),
        AGE_COLUMN,
      ],
      extraSubresources: [
        {
          name: 'token',
          kind: 'TokenRequest',
          group: 'authentication.k8s.io',
          version: 'v1',
          verbs: ['create'],
        },
      ],
    }),
    core('events', 'Event', {
      shortNames: ['ev'],
      storageKey: 'events',
      fieldLabels: eventFieldLabels,
      printerColumns: [
        col('Last Seen', (o, now) =>
          age(str(o, 'lastTimestamp') ?? str(o, 'eventTime') ?? o.metadata.creationTimestamp, now),
        ),
        col('Type', (o) => str(o, 'type')),
        col('Reason', (o) => str(o, 'reason')),
        col(
          'Object',
          (o) =>
            `${(str(o, 'involvedObject', 'kind') ?? '').toLowerCase()}/${str(o, 'involvedObject', 'name') ?? ''}`,
        ),
        col('Message', (o) => str(o, 'message')),
      ],
    }),
    core('pods', 'Pod', {
      extraSubresources: [{ name: 'log', kind: 'Pod', verbs: ['get'] }],
      shortNames: ['po'],
      categories: ['all'],
      statusSubresource: true,
      generation: true,
      returnDeletedObject: true,
      defaults: (o) => {
        o.status ??= { phase: 'Pending' };
      },
      fieldLabels: {
        'spec.nodeName': (o) => str(o, 'spec', 'nodeName') ?? '',
        'spec.restartPolicy': (o) => str(o, 'spec', 'restartPolicy'),
        'spec.serviceAccountName': (o) => str(o, 'spec', 'serviceAccountName'),
        'status.phase': (o) => str(o, 'status', 'phase'),
      },
      printerColumns: [
        NAME_COLUMN,
        col('Ready', podReady),
        col('Status', (o) => str(o, 'status', 'reason') ?? str(o, 'status', 'phase')),
        col('Restarts', () => 0, 'integer'),
        AGE_COLUMN,
      ],
    }),
    resourceType({
      group: 'events.k8s.io',
      version: 'v1',
      plural: 'events',
      kind: 'Event',
      shortNames: ['ev'],
      storageKey: 'events',
      fieldLabels: {
        ...eventFieldLabels,
        ...Object.fromEntries(
          ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map(
            (f) => [`regarding.${f}`, involved(f)],
          ),
        ),
        reportingController: (o) => str(o, 'reportingComponent') ?? '',
      },
      toServed: coreToEventsV1,
      toStorage: eventsV1ToCore,
    }),
    resourceType({
      group: 'coordination.k8s.io',
      version: 'v1',
      plural: 'leases',
      kind: 'Lease',
      allowUnconditionalUpdate: false,
      allowCreateOnUpdate: true,
      printerColumns: [
        NAME_COLUMN,
        col('Holder', (o) => str(o, 'spec', 'holderIdentity') ?? ''),
        AGE_COLUMN,
      ],
    }),
    resourceType({
      group: 'batch',
      version: 'v1',
      plural: 'jobs',
      kind: 'Job',
      categories: ['all'],
      statusSubresource: true,
      generation: true,
      defaultOrphan: true,
      fieldLabels: { 'status.successful': (o) => String(at(o, 'status', 'succeeded') ?? 0) },
      defaults: jobDefaults,
      printerColumns: [
        NAME_COLUMN,
        col('Status', jobStatusText),
        col(
          'Completions',
          (o) => `${at(o, 'status', 'succeeded') ?? 0}/${at(o, 'spec', 'completions') ?? 1}`,
        ),
        col('Duration', jobDuration),
        AGE_COLUMN,
      ],
    }),
    resourceType({
      group: 'batch',
      version: 'v1',
      plural: 'cronjobs',
      kind: 'CronJob',
      shortNames: ['cj'],
      categories: ['all'],
      statusSubresource: true,
      generation: true,
      defaults: cronJobDefaults,
      printerColumns: [
        NAME_COLUMN,
        col('Schedule', (o) => str(o, 'spec', 'schedule')),
        col('Timezone', (o) => str(o, 'spec', 'timeZone') ?? '<none>'),
        col('Suspend', (o) => String(at(o, 'spec', 'suspend') ?? false)),
        col(
          'Active',
          (o) => ((at(o, 'status', 'active') as unknown[] | undefined) ?? []).length,
          'integer',
        ),
        col(
          'Last Schedule',
          (o, now) => age(str(o, 'status', 'lastScheduleTime'), now) ?? '<none>',
        ),
        AGE_COLUMN,
      ],
    }),
    // Stored as given, without controllers: what a Helm chart or a sandbox applies besides the above.
    workload('apps', 'deployments', 'Deployment', ['deploy']),
    workload('apps', 'statefulsets', 'StatefulSet', ['sts']),
    workload('apps', 'daemonsets', 'DaemonSet', ['ds']),
    core('services', 'Service', {
      shortNames: ['svc'],
      categories: ['all'],
      statusSubresource: true,
    }),
    core('persistentvolumeclaims', 'PersistentVolumeClaim', {
      shortNames: ['pvc'],
      statusSubresource: true,
    }),
    resourceType({
      group: 'policy',
      version: 'v1',
      plural: 'poddisruptionbudgets',
      kind: 'PodDisruptionBudget',
      shortNames: ['pdb'],
      statusSubresource: true,
      generation: true,
    }),
    resourceType({
      group: 'networking.k8s.io',
      version: 'v1',
      plural: 'networkpolicies',
      kind: 'NetworkPolicy',
      shortNames: ['netpol'],
      generation: true,
    }),
    resourceType({
      group: 'autoscaling',
      version: 'v2',
      plural: 'horizontalpodautoscalers',
      kind: 'HorizontalPodAutoscaler',
      shortNames: ['hpa'],
      categories: ['all'],
      statusSubresource: true,
    }),
    rbac('roles', 'Role', namespaced),
    rbac('rolebindings', 'RoleBinding', namespaced),
    rbac('clusterroles', 'ClusterRole', cluster),
    rbac('clusterrolebindings', 'ClusterRoleBinding', cluster),
    resourceType({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      plural: 'customresourcedefinitions',
      kind: 'CustomResourceDefinition',
      singular: 'customresourcedefinition',
      namespaced: cluster,
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      statusSubresource: true,
      generation: true,
      printerColumns: [NAME_COLUMN, CREATED_AT_COLUMN],
    }),
    review('authorization.k8s.io', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview'),
    review('authorization.k8s.io', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview'),
    review('authorization.k8s.io', 'subjectaccessreviews', 'SubjectAccessReview'),
    review(
      'authorization.k8s.io',
      'localsubjectaccessreviews',
      'LocalSubjectAccessReview',
      namespaced,
    ),
    review('authentication.k8s.io', 'selfsubjectreviews', 'SelfSubjectReview'),
    review('authentication.k8s.io', 'tokenreviews', 'TokenReview'),
  ];
}
