import { badRequest, unsupportedMediaType } from './errors.js';

/**
 * A minimal decoder for the protobuf request bodies kubectl ≥1.32 sends for its typed commands
 * (`create namespace|configmap|secret|serviceaccount|role|rolebinding`, `auth can-i`, `auth whoami`).
 * Envelope: "k8s\0" + runtime.Unknown{1 typeMeta{1 apiVersion, 2 kind}, 2 raw}; field numbers
 * from k8s.io/api/<group>/<version>/generated.proto.
 */
type FieldType =
  | 'string'
  | 'bytes'
  | 'int'
  | 'bool'
  | 'time'
  | 'intOrString'
  | 'quantity'
  | `msg:${string}`
  | `inline:${string}`
  | 'map'
  | 'mapBytes'
  | 'mapQuantity';

interface FieldDef {
  name: string;
  type: FieldType;
  repeated?: boolean;
}

type MessageDef = Record<number, FieldDef>;

const s = (name: string, repeated = false): FieldDef => ({ name, type: 'string', repeated });
const m = (name: string, msg: string, repeated = false): FieldDef => ({
  name,
  type: `msg:${msg}`,
  repeated,
});

const int = (name: string): FieldDef => ({ name, type: 'int' });
const bool = (name: string): FieldDef => ({ name, type: 'bool' });
/** An embedded Go struct whose fields JSON shows inline (VolumeSource in Volume, …). */
const inline = (msg: string): FieldDef => ({ name: '', type: `inline:${msg}` });

/**
 * Workload kinds kubectl ≥1.32 sends as protobuf (`create deployment|job|cronjob`, `create job
 * --from=cronjob/x`): the pod template fields the operator, the chart and those commands use.
 * Field numbers from k8s.io/api apps/v1, batch/v1 and core/v1 generated.proto.
 */
const WORKLOADS: Record<string, MessageDef> = {
  Deployment: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'DeploymentSpec') },
  DeploymentSpec: {
    1: int('replicas'),
    2: m('selector', 'LabelSelector'),
    3: m('template', 'PodTemplateSpec'),
    4: m('strategy', 'DeploymentStrategy'),
    5: int('minReadySeconds'),
    6: int('revisionHistoryLimit'),
    7: bool('paused'),
    9: int('progressDeadlineSeconds'),
  },
  DeploymentStrategy: { 1: s('type'), 2: m('rollingUpdate', 'RollingUpdateDeployment') },
  RollingUpdateDeployment: {
    1: { name: 'maxUnavailable', type: 'intOrString' },
    2: { name: 'maxSurge', type: 'intOrString' },
  },
  LabelSelector: {
    1: { name: 'matchLabels', type: 'map' },
    2: m('matchExpressions', 'LabelSelectorRequirement', true),
  },
  LabelSelectorRequirement: { 1: s('key'), 2: s('operator'), 3: s('values', true) },
  Job: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'JobSpec') },
  JobSpec: {
    1: int('parallelism'),
    2: int('completions'),
    3: int('activeDeadlineSeconds'),
    4: m('selector', 'LabelSelector'),
    5: bool('manualSelector'),
    6: m('template', 'PodTemplateSpec'),
    7: int('backoffLimit'),
    8: int('ttlSecondsAfterFinished'),
    9: s('completionMode'),
    10: bool('suspend'),
    12: int('backoffLimitPerIndex'),
    13: int('maxFailedIndexes'),
    14: s('podReplacementPolicy'),
    15: s('managedBy'),
  },
  CronJob: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'CronJobSpec') },
  CronJobSpec: {
    1: s('schedule'),
    2: int('startingDeadlineSeconds'),
    3: s('concurrencyPolicy'),
    4: bool('suspend'),
    5: m('jobTemplate', 'JobTemplateSpec'),
    6: int('successfulJobsHistoryLimit'),
    7: int('failedJobsHistoryLimit'),
    8: s('timeZone'),
  },
  JobTemplateSpec: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'JobSpec') },
  PodTemplateSpec: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'PodSpec') },
  PodSpec: {
    1: m('volumes', 'Volume', true),
    2: m('containers', 'Container', true),
    3: s('restartPolicy'),
    4: int('terminationGracePeriodSeconds'),
    5: int('activeDeadlineSeconds'),
    6: s('dnsPolicy'),
    7: { name: 'nodeSelector', type: 'map' },
    8: s('serviceAccountName'),
    9: s('serviceAccount'),
    10: s('nodeName'),
    14: m('securityContext', 'PodSecurityContext'),
    15: m('imagePullSecrets', 'LocalObjectReference', true),
    19: s('schedulerName'),
    20: m('initContainers', 'Container', true),
    21: bool('automountServiceAccountToken'),
    22: m('tolerations', 'Toleration', true),
    24: s('priorityClassName'),
    30: bool('enableServiceLinks'),
  },
  Container: {
    1: s('name'),
    2: s('image'),
    3: s('command', true),
    4: s('args', true),
    5: s('workingDir'),
    6: m('ports', 'ContainerPort', true),
    7: m('env', 'EnvVar', true),
    8: m('resources', 'ResourceRequirements'),
    9: m('volumeMounts', 'VolumeMount', true),
    13: s('terminationMessagePath'),
    14: s('imagePullPolicy'),
    15: m('securityContext', 'SecurityContext'),
    19: m('envFrom', 'EnvFromSource', true),
    20: s('terminationMessagePolicy'),
  },
  ContainerPort: { 1: s('name'), 2: int('hostPort'), 3: int('containerPort'), 4: s('protocol') },
  EnvVar: { 1: s('name'), 2: s('value'), 3: m('valueFrom', 'EnvVarSource') },
  EnvVarSource: {
    1: m('fieldRef', 'ObjectFieldSelector'),
    3: m('configMapKeyRef', 'KeySelector'),
    4: m('secretKeyRef', 'KeySelector'),
  },
  ObjectFieldSelector: { 1: s('apiVersion'), 2: s('fieldPath') },
  KeySelector: { 1: inline('LocalObjectReference'), 2: s('key'), 3: bool('optional') },
  EnvFromSource: {
    1: s('prefix'),
    2: m('configMapRef', 'EnvSource'),
    3: m('secretRef', 'EnvSource'),
  },
  EnvSource: { 1: inline('LocalObjectReference'), 2: bool('optional') },
  ResourceRequirements: {
    1: { name: 'limits', type: 'mapQuantity' },
    2: { name: 'requests', type: 'mapQuantity' },
  },
  VolumeMount: { 1: s('name'), 2: bool('readOnly'), 3: s('mountPath'), 4: s('subPath') },
  Volume: { 1: s('name'), 2: inline('VolumeSource') },
  VolumeSource: {
    2: m('emptyDir', 'EmptyDirVolumeSource'),
    6: m('secret', 'SecretVolumeSource'),
    10: m('persistentVolumeClaim', 'PersistentVolumeClaimVolumeSource'),
    19: m('configMap', 'ConfigMapVolumeSource'),
  },
  EmptyDirVolumeSource: { 1: s('medium'), 2: { name: 'sizeLimit', type: 'quantity' } },
  SecretVolumeSource: {
    1: s('secretName'),
    2: m('items', 'KeyToPath', true),
    3: int('defaultMode'),
    4: bool('optional'),
  },
  ConfigMapVolumeSource: {
    1: inline('LocalObjectReference'),
    2: m('items', 'KeyToPath', true),
    3: int('defaultMode'),
    4: bool('optional'),
  },
  KeyToPath: { 1: s('key'), 2: s('path'), 3: int('mode') },
  PersistentVolumeClaimVolumeSource: { 1: s('claimName'), 2: bool('readOnly') },
  SecurityContext: {
    1: m('capabilities', 'Capabilities'),
    2: bool('privileged'),
    4: int('runAsUser'),
    5: bool('runAsNonRoot'),
    6: bool('readOnlyRootFilesystem'),
    7: bool('allowPrivilegeEscalation'),
    8: int('runAsGroup'),
    11: m('seccompProfile', 'SeccompProfile'),
  },
  PodSecurityContext: {
    2: int('runAsUser'),
    3: bool('runAsNonRoot'),
    4: { name: 'supplementalGroups', type: 'int', repeated: true },
    5: int('fsGroup'),
    6: int('runAsGroup'),
    10: m('seccompProfile', 'SeccompProfile'),
  },
  Capabilities: { 1: s('add', true), 2: s('drop', true) },
  SeccompProfile: { 1: s('type'), 2: s('localhostProfile') },
  Toleration: {
    1: s('key'),
    2: s('operator'),
    3: s('value'),
    4: s('effect'),
    5: int('tolerationSeconds'),
  },
  IntOrString: { 1: int('type'), 2: int('intVal'), 3: s('strVal') },
  Quantity: { 1: s('string') },
};

const MESSAGES: Record<string, MessageDef> = {
  ...WORKLOADS,
  Unknown: {
    1: m('typeMeta', 'TypeMeta'),
    2: { name: 'raw', type: 'bytes' },
    3: s('contentEncoding'),
    4: s('contentType'),
  },
  TypeMeta: { 1: s('apiVersion'), 2: s('kind') },
  ObjectMeta: {
    1: s('name'),
    2: s('generateName'),
    3: s('namespace'),
    5: s('uid'),
    6: s('resourceVersion'),
    7: { name: 'generation', type: 'int' },
    8: { name: 'creationTimestamp', type: 'time' },
    11: { name: 'labels', type: 'map' },
    12: { name: 'annotations', type: 'map' },
    13: m('ownerReferences', 'OwnerReference', true),
    14: s('finalizers', true),
  },
  OwnerReference: {
    1: s('kind'),
    3: s('name'),
    4: s('uid'),
    5: s('apiVersion'),
    6: { name: 'controller', type: 'bool' },
    7: { name: 'blockOwnerDeletion', type: 'bool' },
  },
  Namespace: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'NamespaceSpec') },
  NamespaceSpec: { 1: s('finalizers', true) },
  ConfigMap: {
    1: m('metadata', 'ObjectMeta'),
    2: { name: 'data', type: 'map' },
    3: { name: 'binaryData', type: 'mapBytes' },
    4: { name: 'immutable', type: 'bool' },
  },
  Secret: {
    1: m('metadata', 'ObjectMeta'),
    2: { name: 'data', type: 'mapBytes' },
    3: s('type'),
    4: { name: 'stringData', type: 'map' },
    5: { name: 'immutable', type: 'bool' },
  },
  ServiceAccount: {
    1: m('metadata', 'ObjectMeta'),
    3: m('imagePullSecrets', 'LocalObjectReference', true),
    4: { name: 'automountServiceAccountToken', type: 'bool' },
  },
  LocalObjectReference: { 1: s('name') },
  Role: { 1: m('metadata', 'ObjectMeta'), 2: m('rules', 'PolicyRule', true) },
  ClusterRole: { 1: m('metadata', 'ObjectMeta'), 2: m('rules', 'PolicyRule', true) },
  PolicyRule: {
    1: s('verbs', true),
    2: s('apiGroups', true),
    3: s('resources', true),
    4: s('resourceNames', true),
    5: s('nonResourceURLs', true),
  },
  RoleBinding: {
    1: m('metadata', 'ObjectMeta'),
    2: m('subjects', 'Subject', true),
    3: m('roleRef', 'RoleRef'),
  },
  ClusterRoleBinding: {
    1: m('metadata', 'ObjectMeta'),
    2: m('subjects', 'Subject', true),
    3: m('roleRef', 'RoleRef'),
  },
  Subject: { 1: s('kind'), 2: s('apiGroup'), 3: s('name'), 4: s('namespace') },
  RoleRef: { 1: s('apiGroup'), 2: s('kind'), 3: s('name') },
  SelfSubjectAccessReview: {
    1: m('metadata', 'ObjectMeta'),
    2: m('spec', 'SelfSubjectAccessReviewSpec'),
  },
  SelfSubjectAccessReviewSpec: {
    1: m('resourceAttributes', 'ResourceAttributes'),
    2: m('nonResourceAttributes', 'NonResourceAttributes'),
  },
  SubjectAccessReview: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'SubjectAccessReviewSpec') },
  LocalSubjectAccessReview: {
    1: m('metadata', 'ObjectMeta'),
    2: m('spec', 'SubjectAccessReviewSpec'),
  },
  SubjectAccessReviewSpec: {
    1: m('resourceAttributes', 'ResourceAttributes'),
    2: m('nonResourceAttributes', 'NonResourceAttributes'),
    3: s('user'),
    4: s('groups', true),
    6: s('uid'),
  },
  ResourceAttributes: {
    1: s('namespace'),
    2: s('verb'),
    3: s('group'),
    4: s('version'),
    5: s('resource'),
    6: s('subresource'),
    7: s('name'),
  },
  NonResourceAttributes: { 1: s('path'), 2: s('verb') },
  SelfSubjectRulesReview: {
    1: m('metadata', 'ObjectMeta'),
    2: m('spec', 'SelfSubjectRulesReviewSpec'),
  },
  SelfSubjectRulesReviewSpec: { 1: s('namespace') },
  SelfSubjectReview: { 1: m('metadata', 'ObjectMeta') },
  TokenRequest: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'TokenRequestSpec') },
  TokenRequestSpec: { 1: s('audiences', true), 4: { name: 'expirationSeconds', type: 'int' } },
  // helm's uninstall and other typed-client deletes.
  DeleteOptions: {
    1: { name: 'gracePeriodSeconds', type: 'int' },
    2: m('preconditions', 'Preconditions'),
    3: { name: 'orphanDependents', type: 'bool' },
    4: s('propagationPolicy'),
    5: s('dryRun', true),
  },
  Preconditions: { 1: s('uid'), 2: s('resourceVersion') },
  Time: { 1: { name: 'seconds', type: 'int' }, 2: { name: 'nanos', type: 'int' } },
};

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.buf.length) throw badRequest('protobuf: truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
    }
  }

  bytes(): Buffer {
    const len = this.varint();
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }

  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw badRequest(`protobuf: unsupported wire type ${wire}`);
  }
}

function decodeMapEntry(buf: Buffer, type: FieldType): [string, string] {
  const r = new Reader(buf);
  let key = '';
  let value = '';
  while (r.pos < buf.length) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    if (field === 1) key = r.bytes().toString('utf8');
    else if (field === 2) {
      const b = r.bytes();
      if (type === 'mapBytes') value = b.toString('base64');
      else if (type === 'mapQuantity') value = String(decodeMessage(b, 'Quantity').string ?? '0');
      else value = b.toString('utf8');
    } else r.skip(tag & 7);
  }
  return [key, value];
}

function decodeMessage(buf: Buffer, typeName: string): Record<string, unknown> {
  const def = MESSAGES[typeName];
  if (!def)
    throw unsupportedMediaType(`protobuf message ${typeName} is not decoded by the emulator`);
  const out: Record<string, unknown> = {};
  const r = new Reader(buf);
  while (r.pos < buf.length) {
    const tag = r.varint();
    const f = def[Math.floor(tag / 8)];
    if (!f) {
      r.skip(tag & 7);
      continue;
    }
    let value: unknown;
    switch (f.type) {
      case 'int':
        value = r.varint();
        break;
      case 'bool':
        value = r.varint() !== 0;
        break;
      case 'string':
        value = r.bytes().toString('utf8');
        // Go omits empty strings from JSON (omitempty); protobuf carries them explicitly.
        if (value === '' && !f.repeated) continue;
        break;
      case 'bytes':
        value = r.bytes();
        break;
      case 'time': {
        const t = decodeMessage(r.bytes(), 'Time');
        if (!t.seconds) continue;
        value = new Date(Number(t.seconds ?? 0) * 1000).toISOString().replace('.000Z', 'Z');
        break;
      }
      case 'map':
      case 'mapBytes':
      case 'mapQuantity': {
        const [k, v] = decodeMapEntry(r.bytes(), f.type);
        const map = (out[f.name] ??= {}) as Record<string, string>;
        map[k] = v;
        continue;
      }
      case 'intOrString': {
        const v = decodeMessage(r.bytes(), 'IntOrString');
        value = v.type === 1 ? (v.strVal ?? '') : (v.intVal ?? 0);
        break;
      }
      case 'quantity':
        value = decodeMessage(r.bytes(), 'Quantity').string ?? '0';
        break;
      default:
        if (f.type.startsWith('inline:')) {
          Object.assign(out, decodeMessage(r.bytes(), f.type.slice(7)));
          continue;
        }
        value = decodeMessage(r.bytes(), f.type.slice(4));
    }
    if (f.repeated) ((out[f.name] ??= []) as unknown[]).push(value);
    else out[f.name] = value;
  }
  return out;
}

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Decodes a `k8s\0`-enveloped object into the JSON shape the REST handlers take. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw badRequest('protobuf body without the k8s envelope');
  const unknown = decodeMessage(body.subarray(4), 'Unknown');
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const kind = typeMeta.kind ?? '';
  if (!MESSAGES[kind]) {
    throw unsupportedMediaType(
      `the emulator does not decode protobuf bodies of kind ${kind}; send JSON (kubectl create -f, or kubectl ≤1.31)`,
    );
  }
  const obj = decodeMessage((unknown.raw as Buffer | undefined) ?? Buffer.alloc(0), kind);
  return { apiVersion: typeMeta.apiVersion, kind, ...obj, metadata: obj.metadata ?? {} };
}
