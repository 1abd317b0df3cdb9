import { badRequest, unsupportedMediaType } from './errors.js';

/**
 * A minimal decoder for the protobuf request bodies kubectl ≥1.32 sends for its typed commands
 * (`create namespace|configmap|secret|serviceaccount|role|rolebinding`, `auth can-i`, `auth whoami`).
 * Envelope: "k8s\0" + runtime.Unknown{1 typeMeta{1 apiVersion, 2 kind}, 2 raw}; field numbers
 * from k8s.io/api/<group>/<version>/generated.proto.
 */
type FieldType =
  'string' | 'bytes' | 'int' | 'bool' | 'time' | `msg:${string}` | 'map' | 'mapBytes';

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

const MESSAGES: Record<string, MessageDef> = {
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
  Time: { 1: { name: 'seconds', type: 'int' }, 2: { name: 'nanos', type: 'int' } },
  // client-go (Helm's uninstall) sends the body of a DELETE as protobuf too.
  DeleteOptions: {
    1: { name: 'gracePeriodSeconds', type: 'int' },
    2: m('preconditions', 'Preconditions'),
    3: { name: 'orphanDependents', type: 'bool' },
    4: s('propagationPolicy'),
    5: s('dryRun', true),
  },
  Preconditions: { 1: s('uid'), 2: s('resourceVersion') },
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

function decodeMapEntry(buf: Buffer, valueBytes: boolean): [string, string] {
  const r = new Reader(buf);
  let key = '';
  let value = '';
  while (r.pos < buf.length) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    if (field === 1) key = r.bytes().toString('utf8');
    else if (field === 2) {
      const b = r.bytes();
      value = valueBytes ? b.toString('base64') : b.toString('utf8');
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
      case 'mapBytes': {
        const [k, v] = decodeMapEntry(r.bytes(), f.type === 'mapBytes');
        const map = (out[f.name] ??= {}) as Record<string, string>;
        map[k] = v;
        continue;
      }
      default:
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
