import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import type { Emulator, StartOptions } from '../src/index.js';
import type { KubeObject } from '../src/types.js';
import { CRD_FILE, http, kubectl, protoEnvelope, watchEvents, withEmulator } from './support.js';
import { eventually } from '#testing';

const CM = '/api/v1/namespaces/ops/configmaps';

/** A fresh emulator (namespace ops) for the enclosing describe; `call` talks HTTP to it. */
function freshEmulator(opts: StartOptions = {}) {
  let emu: Emulator | undefined;
  before(async () => {
    emu = await withEmulator({ namespaces: ['ops'], ...opts });
  });
  after(() => emu?.stop());
  const current = () => emu!;
  const call: ReturnType<typeof http> = (...args) => http(current())(...args);
  return { emu: current, call };
}

/**
 * Wire-level behaviours that clients the project did not write (the Python client, helm, newer
 * kubectl) depend on, each checked against what kube-apiserver documents.
 */
describe('answers like kube-apiserver', () => {
  const { emu, call } = freshEmulator();

  // Query parameters are converted with Go's strconv.ParseBool (api-concepts; the Python client sends watch=True).
  describe('boolean query parameters', () => {
    test('watch=True opens a watch rather than answering a list', async () => {
      await call('POST', CM, { metadata: { name: 'bool-watch' } });
      const events = await watchEvents(
        `${emu().url}${CM}?watch=True&fieldSelector=metadata.name%3Dbool-watch`,
        (e) => e.length >= 1,
        3000,
      );
      assert.equal(events[0]?.type, 'ADDED');
      assert.equal(events[0]?.object.metadata.name, 'bool-watch');
    });

    test('force=True on a server-side apply takes the conflicting field', async () => {
      const apply = (manager: string, value: string, force: string) =>
        call(
          'PATCH',
          `${CM}/bool-force?fieldManager=${manager}${force ? `&force=${force}` : ''}`,
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'bool-force' },
            data: { k: value },
          }),
          { 'Content-Type': 'application/apply-patch+yaml' },
        );
      assert.equal((await apply('first', 'a', '')).status, 201);
      assert.equal((await apply('second', 'b', '')).status, 409);
      const forced = await apply('second', 'b', 'True');
      assert.equal(forced.status, 200, forced.text);
      assert.equal(forced.json.data.k, 'b');
    });

    test('a value ParseBool rejects is a 400 naming the parameter', async () => {
      const r = await call('PATCH', `${CM}/bool-force?fieldManager=x&force=yes`, '{}', {
        'Content-Type': 'application/apply-patch+yaml',
      });
      assert.equal(r.status, 400);
      assert.match(r.json.message, /force/);
    });
  });
});

describe('Secrets', () => {
  const { call } = freshEmulator();
  const SECRETS = '/api/v1/namespaces/ops/secrets';

  // docs/concepts/configuration/secret/#restriction-names-data: stringData is write-only and merged into data.
  test('stringData is merged into data as base64 and not stored', async () => {
    const r = await call('POST', SECRETS, {
      metadata: { name: 'merged' },
      data: { a: Buffer.from('old').toString('base64'), b: Buffer.from('kept').toString('base64') },
      stringData: { a: 'new', c: 'plain' },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.stringData, undefined);
    assert.deepEqual(r.json.data, {
      a: Buffer.from('new').toString('base64'),
      b: Buffer.from('kept').toString('base64'),
      c: Buffer.from('plain').toString('base64'),
    });
    const patched = await call(
      'PATCH',
      `${SECRETS}/merged`,
      { stringData: { b: 'changed' } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(patched.json.data.b, Buffer.from('changed').toString('base64'));
    assert.equal(patched.json.stringData, undefined);
  });

  test('data that is not base64 is a 400, as the JSON decoder of []byte rejects it', async () => {
    const r = await call('POST', SECRETS, {
      metadata: { name: 'bad' },
      data: { a: 'not base64!' },
    });
    assert.equal(r.status, 400);
    assert.match(r.json.message, /illegal base64 data at input byte 3/);
    assert.equal((await call('GET', `${SECRETS}/bad`)).status, 404);
  });
});

// helm (client-go typed clients) sends DeleteOptions as protobuf: meta/v1 generated.proto fields
// 2 preconditions{1 uid}, 4 propagationPolicy.
describe('protobuf DeleteOptions', () => {
  const { call } = freshEmulator();

  test('a protobuf DeleteOptions body is decoded: preconditions and propagationPolicy apply', async () => {
    const created = await call('POST', CM, { metadata: { name: 'pb-delete' } });
    const del = (uid: string) =>
      call(
        'DELETE',
        `${CM}/pb-delete`,
        protoEnvelope('meta.k8s.io/v1', 'DeleteOptions', [
          [2, [[1, uid]]],
          [4, 'Background'],
        ]),
        { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
      );
    const wrong = await del('not-the-uid');
    assert.equal(wrong.status, 409, wrong.text);
    assert.match(wrong.json.message, /Precondition failed: UID in precondition: not-the-uid/);
    const right = await del(created.json.metadata.uid);
    assert.equal(right.status, 200, right.text);
    assert.equal((await call('GET', `${CM}/pb-delete`)).status, 404);
  });
});

// server-side-apply docs, "Upgrading from client-side apply to server-side apply": the first
// `kubectl apply --server-side` takes over what the last-applied-configuration annotation lists.
describe('client-side to server-side apply', () => {
  const { call } = freshEmulator();

  async function clientSideApplied(name: string): Promise<void> {
    const config = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'ops' },
      data: { a: '1' },
    };
    const r = await call('POST', `${CM}?fieldManager=kubectl-client-side-apply`, {
      ...config,
      metadata: {
        ...config.metadata,
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(config) },
      },
      data: { a: '1', b: 'set by hand' },
    });
    assert.equal(r.status, 201, r.text);
  }

  const apply = (name: string, manager: string, data: Record<string, string>) =>
    call(
      'PATCH',
      `${CM}/${name}?fieldManager=${manager}&force=false`,
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }),
      { 'Content-Type': 'application/apply-patch+yaml' },
    );

  test('kubectl takes over the fields the annotation lists', async () => {
    await clientSideApplied('csa-upgrade');
    const r = await apply('csa-upgrade', 'kubectl', { a: '2' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.a, '2');
    const mine = r.json.metadata.managedFields.find(
      (e: { manager: string }) => e.manager === 'kubectl',
    );
    assert.ok(mine.fieldsV1['f:data']['f:a']);
  });

  test('fields outside the annotation, and other managers, still conflict', async () => {
    await clientSideApplied('csa-other');
    const outside = await apply('csa-other', 'kubectl', { a: '1', b: 'changed' });
    assert.equal(outside.status, 409);
    assert.match(outside.json.message, /\.data\.b/);
    const otherManager = await apply('csa-other', 'deployer', { a: '2' });
    assert.equal(otherManager.status, 409);
  });
});

// server-side-apply docs, "Field management": a status write owns status only, a main-resource
// write of a kind with a status subresource never owns status, and an Update adds to what its
// manager owned before.
describe('managedFields ownership', () => {
  // No deployment controller: its status writes would race the hand-written ones.
  const { call } = freshEmulator({ controllers: { deployments: false } });
  const DEPLOY = '/apis/apps/v1/namespaces/ops/deployments';

  const entry = (
    obj: { metadata: { managedFields: { manager: string; subresource?: string }[] } },
    manager: string,
    sub = '',
  ) =>
    obj.metadata.managedFields.find(
      (e) => e.manager === manager && (e.subresource ?? '') === sub,
    ) as { fieldsV1: Record<string, Record<string, unknown>> } | undefined;

  const deployment = (name: string, replicas: number) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      },
    },
    status: { replicas: 9 },
  });

  test('a /status write owns status only; a main write does not own status', async () => {
    const created = await call(
      'POST',
      `${DEPLOY}?fieldManager=creator`,
      deployment('mf-status', 1),
    );
    assert.equal(created.status, 201, created.text);
    assert.equal(entry(created.json, 'creator')?.fieldsV1['f:status'], undefined);
    const put = await call('PUT', `${DEPLOY}/mf-status/status?fieldManager=statuswriter`, {
      ...created.json,
      metadata: { ...created.json.metadata, labels: { app: 'mf-status', extra: 'x' } },
      spec: { ...created.json.spec, replicas: 5 },
      status: { replicas: 3 },
    });
    assert.equal(put.status, 200, put.text);
    const owned = entry(put.json, 'statuswriter', 'status')!.fieldsV1;
    assert.deepEqual(Object.keys(owned), ['f:status']);
  });

  test('an Update keeps what its manager owned before', async () => {
    const cm = await call('POST', `${CM}?fieldManager=editor`, {
      metadata: { name: 'mf-update' },
      data: { a: '1' },
    });
    assert.equal(cm.status, 201, cm.text);
    const patched = await call(
      'PATCH',
      `${CM}/mf-update?fieldManager=editor`,
      { data: { b: '2' } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    const owned = entry(patched.json, 'editor')!.fieldsV1['f:data']!;
    assert.deepEqual(Object.keys(owned).sort(), ['f:a', 'f:b']);
    const removed = await call(
      'PATCH',
      `${CM}/mf-update?fieldManager=editor`,
      { data: { a: null } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.deepEqual(Object.keys(entry(removed.json, 'editor')!.fieldsV1['f:data']!), ['f:b']);
  });
});

// kubectl ≥1.32 typed commands send protobuf (research §0.3); kubectl explain reads the kind's
// schema from /openapi/v3 (docs/reference/kubectl/generated/kubectl_explain).
describe('kubectl 1.32 typed create and explain', () => {
  const { emu } = freshEmulator();
  let k: ReturnType<typeof kubectl>;
  let old: ReturnType<typeof kubectl>;
  const KUBECTL_131 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.31';

  before(() => {
    k = kubectl(emu(), 'kubectl');
    old = kubectl(emu(), KUBECTL_131);
  });
  after(() => {
    k.cleanup();
    old.cleanup();
  });

  /** The object kubectl 1.32 (protobuf) created, next to what kubectl 1.31 (JSON) created from the same command. */
  async function both(args: string[]): Promise<[Record<string, unknown>, Record<string, unknown>]> {
    // Flags before `--`: what follows it is the container command.
    const run = (bin: typeof k, name: string) =>
      bin([...args.slice(0, 2), name, '-n', 'ops', '-o', 'json', ...args.slice(3)]);
    const pb = await run(k, 'pb');
    assert.equal(pb.code, 0, pb.stderr);
    const json = await run(old, 'js');
    assert.equal(json.code, 0, json.stderr);
    return [JSON.parse(pb.stdout), JSON.parse(json.stdout)];
  }

  /** The parts of an object a decoder can get wrong: everything but names and server-set fields. */
  function comparable(obj: Record<string, unknown>): unknown {
    const text = JSON.stringify({
      spec: obj.spec,
      labels: (obj.metadata as { labels?: unknown }).labels,
    })
      .replaceAll('"pb"', '"x"')
      .replaceAll('"js"', '"x"')
      .replace(/"[0-9a-f]{8}-[0-9a-f-]{27}"/g, '"uid"');
    return JSON.parse(text);
  }

  for (const [what, args] of [
    [
      'deployment',
      ['create', 'deployment', '{name}', '--image=busybox:1.36', '--replicas=2', '--port=8080'],
    ],
    ['job', ['create', 'job', '{name}', '--image=busybox:1.36', '--', 'sh', '-c', 'echo hi']],
    [
      'cronjob',
      [
        'create',
        'cronjob',
        '{name}',
        '--image=busybox:1.36',
        '--schedule=*/5 * * * *',
        '--',
        'date',
      ],
    ],
  ] as const) {
    test(`create ${what} decodes to what the JSON client creates`, async () => {
      const [pb, json] = await both([...args]);
      assert.deepEqual(comparable(pb), comparable(json));
    });
  }

  test('create job --from=cronjob copies the operator-shaped job template', async () => {
    const cron = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'shaped', namespace: 'ops' },
      spec: {
        schedule: '10 2 * * *',
        jobTemplate: {
          spec: {
            backoffLimit: 2,
            template: {
              spec: {
                restartPolicy: 'Never',
                securityContext: {
                  runAsNonRoot: true,
                  runAsUser: 10001,
                  fsGroup: 10001,
                  seccompProfile: { type: 'RuntimeDefault' },
                },
                containers: [
                  {
                    name: 'backup',
                    image: 'backup:1',
                    env: [
                      { name: 'A', value: 'b' },
                      { name: 'P', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
                    ],
                    resources: {
                      requests: { cpu: '100m', memory: '64Mi' },
                      limits: { memory: '256Mi' },
                    },
                    volumeMounts: [
                      { name: 'data', mountPath: '/backup' },
                      { name: 'creds', mountPath: '/creds', readOnly: true },
                    ],
                    securityContext: {
                      allowPrivilegeEscalation: false,
                      readOnlyRootFilesystem: true,
                      capabilities: { drop: ['ALL'] },
                    },
                  },
                ],
                volumes: [
                  { name: 'data', persistentVolumeClaim: { claimName: 'pvc' } },
                  { name: 'tmp', emptyDir: {} },
                  { name: 'creds', secret: { secretName: 's', defaultMode: 288 } },
                ],
              },
            },
          },
        },
      },
    };
    assert.equal((await emu().objects.create(cron)).metadata.name, 'shaped');
    const r = await k([
      'create',
      'job',
      'manual',
      '--from=cronjob/shaped',
      '-n',
      'ops',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const job = JSON.parse(r.stdout) as { spec: { template: { spec: unknown } } };
    assert.deepEqual(job.spec.template.spec, cron.spec.jobTemplate.spec.template.spec);
  });

  test('kubectl explain backupjob.spec lists the schema fields', async () => {
    const crd = await k(['apply', '-f', CRD_FILE]);
    assert.equal(crd.code, 0, crd.stderr);
    const r = await k(['explain', 'backupjob.spec']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /KIND:\s+BackupJob/);
    assert.match(r.stdout, /schedule\s+<string>/);
  });
});

// docs/concepts/workloads/controllers/deployment/ (rollouts, revisions, scaling) and the
// autoscaling/v1 Scale subresource; no Pods run, so replicas are available at once.
describe('Deployments: ReplicaSets, scale, rollout', () => {
  const { emu, call } = freshEmulator();
  let k: ReturnType<typeof kubectl>;
  const DEPLOY = '/apis/apps/v1/namespaces/ops/deployments';
  const RS = '/apis/apps/v1/namespaces/ops/replicasets';

  before(() => {
    k = kubectl(emu());
  });
  after(() => k.cleanup());

  const deployment = (name: string, image: string) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'ops' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image }] },
      },
    },
  });

  async function replicaSets(name: string) {
    const list = await call('GET', `${RS}?labelSelector=app%3D${name}`);
    return (list.json.items as KubeObject[]).sort(
      (a, b) =>
        Number(a.metadata.annotations!['deployment.kubernetes.io/revision']) -
        Number(b.metadata.annotations!['deployment.kubernetes.io/revision']),
    );
  }

  test('a Deployment gets a ReplicaSet at revision 1 and a finished rollout status', async () => {
    assert.equal((await call('POST', DEPLOY, deployment('web', 'nginx:1'))).status, 201);
    const d = await eventually('web available', async () => {
      const r = await call('GET', `${DEPLOY}/web`);
      return r.json.status?.availableReplicas === 2 ? r.json : undefined;
    });
    assert.equal(d.status.observedGeneration, d.metadata.generation);
    assert.equal(d.status.updatedReplicas, 2);
    assert.equal(d.metadata.annotations['deployment.kubernetes.io/revision'], '1');
    assert.deepEqual(
      d.status.conditions.map((c: { type: string; status: string; reason: string }) => [
        c.type,
        c.status,
        c.reason,
      ]),
      [
        ['Available', 'True', 'MinimumReplicasAvailable'],
        ['Progressing', 'True', 'NewReplicaSetAvailable'],
      ],
    );
    const [rs] = await replicaSets('web');
    assert.ok(rs, 'a ReplicaSet');
    const hash = rs.metadata.labels!['pod-template-hash']!;
    assert.equal(rs.metadata.name, `web-${hash}`);
    assert.equal(rs.metadata.ownerReferences![0]!.uid, d.metadata.uid);
    assert.equal((rs.status as { readyReplicas: number }).readyReplicas, 2);
  });

  test('the scale subresource reads and writes spec.replicas', async () => {
    const scale = await call('GET', `${DEPLOY}/web/scale`);
    assert.equal(scale.status, 200, scale.text);
    assert.equal(scale.json.kind, 'Scale');
    assert.equal(scale.json.apiVersion, 'autoscaling/v1');
    assert.equal(scale.json.spec.replicas, 2);
    assert.equal(scale.json.status.selector, 'app=web');
    const patched = await call(
      'PATCH',
      `${DEPLOY}/web/scale`,
      { spec: { replicas: 4 } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.spec.replicas, 4);
    await eventually(
      'scaled',
      async () => (await call('GET', `${DEPLOY}/web`)).json.status?.availableReplicas === 4,
    );
    const dry = await call(
      'PATCH',
      `${DEPLOY}/web/scale?dryRun=All`,
      { spec: { replicas: 9 } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(dry.json.spec.replicas, 9);
    assert.equal(
      (await call('GET', `${DEPLOY}/web`)).json.spec.replicas,
      4,
      'dry run stores nothing',
    );
    const bad = await call('PUT', `${DEPLOY}/web/scale`, {
      ...scale.json,
      metadata: { name: 'web' },
      spec: { replicas: -1 },
    });
    assert.equal(bad.status, 422);
  });

  test('kubectl scale, rollout status/history/undo and get columns behave as on a cluster', async () => {
    const scaled = await k(['scale', 'deploy/web', '--replicas=3', '-n', 'ops']);
    assert.equal(scaled.code, 0, scaled.stderr);
    const status = await k(['rollout', 'status', 'deploy/web', '-n', 'ops', '--timeout=20s']);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /successfully rolled out/);
    const image = await k(['set', 'image', 'deploy/web', 'c=nginx:2', '-n', 'ops']);
    assert.equal(image.code, 0, image.stderr);
    assert.equal(
      (await k(['rollout', 'status', 'deploy/web', '-n', 'ops', '--timeout=20s'])).code,
      0,
    );
    const sets = await eventually('two ReplicaSets, the old one scaled down', async () => {
      const list = await replicaSets('web');
      return list.length === 2 && (list[0]!.spec as { replicas: number }).replicas === 0
        ? list
        : undefined;
    });
    assert.equal((sets![1]!.spec as { replicas: number }).replicas, 3);
    const history = await k(['rollout', 'history', 'deploy/web', '-n', 'ops']);
    assert.equal(history.code, 0, history.stderr);
    assert.match(history.stdout, /^1\s/m);
    assert.match(history.stdout, /^2\s/m);
    const undo = await k(['rollout', 'undo', 'deploy/web', '-n', 'ops']);
    assert.equal(undo.code, 0, undo.stderr);
    const back = await eventually('revision 3 after undo', async () => {
      const r = await call('GET', `${DEPLOY}/web`);
      return r.json.metadata.annotations?.['deployment.kubernetes.io/revision'] === '3'
        ? r.json
        : undefined;
    });
    assert.equal(back.spec.template.spec.containers[0].image, 'nginx:1');
    assert.equal((await replicaSets('web')).length, 2, 'undo reuses the revision-1 ReplicaSet');
    const get = await k(['get', 'deploy', 'web', '-n', 'ops']);
    assert.match(get.stdout, /NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE/);
    assert.match(get.stdout, /web\s+3\/3\s+3\s+3\s/);
  });
});

// pkg/apis/{core,apps,batch}/validation; meta/v1 ValidateListOptions; api-concepts
// #semantics-for-watch (410 Gone) and content negotiation (application/yaml).
describe('validation, list options and content types', () => {
  const { emu, call } = freshEmulator();

  test('a ConfigMap key outside [-._a-zA-Z0-9] is a 422 naming the key', async () => {
    const r = await call('POST', CM, { metadata: { name: 'badkey' }, data: { 'bad key!': 'v' } });
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, /data\[bad key!\]: Invalid value: "bad key!": a valid config key/);
  });

  test('a Pod without containers is a 422', async () => {
    const r = await call('POST', '/api/v1/namespaces/ops/pods', {
      metadata: { name: 'empty' },
      spec: { containers: [] },
    });
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, /spec.containers: Required value/);
  });

  test('a Deployment without a selector is a 422', async () => {
    const r = await call('POST', '/apis/apps/v1/namespaces/ops/deployments', {
      metadata: { name: 'noselector' },
      spec: {
        template: {
          metadata: { labels: { app: 'x' } },
          spec: { containers: [{ name: 'c', image: 'busybox' }] },
        },
      },
    });
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, /spec.selector: Required value/);
    assert.match(r.json.message, /`selector` does not match template `labels`/);
  });

  test('resourceVersionMatch without resourceVersion is rejected', async () => {
    const r = await call('GET', `${CM}?resourceVersionMatch=NotOlderThan`);
    assert.equal(r.status, 422, r.text);
    assert.match(
      r.json.message,
      /resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided/,
    );
    const exact = await call('GET', `${CM}?resourceVersionMatch=Exact&resourceVersion=0`);
    assert.equal(exact.status, 422);
  });

  test('an exact list or a watch from a compacted resourceVersion is 410 Gone', async () => {
    const first = await call('POST', CM, { metadata: { name: 'before-compaction' } });
    await call('POST', CM, { metadata: { name: 'after-first' } });
    emu().compact();
    const rv = Number(first.json.metadata.resourceVersion) - 1;
    const list = await call('GET', `${CM}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    assert.equal(list.status, 410, list.text);
    assert.equal(list.json.reason, 'Expired');
    const events = await watchEvents(
      `${emu().url}${CM}?watch=1&resourceVersion=${rv}`,
      (e) => e.length >= 1,
      3000,
    );
    assert.deepEqual(
      events.map((e) => [e.type, e.object.code]),
      [['ERROR', 410]],
    );
  });

  test('Accept: application/yaml is answered in YAML', async () => {
    await call('POST', CM, { metadata: { name: 'as-yaml' }, data: { k: 'v' } });
    const one = await call('GET', `${CM}/as-yaml`, undefined, { Accept: 'application/yaml' });
    assert.equal(one.status, 200);
    assert.match(one.headers.get('content-type') ?? '', /^application\/yaml/);
    assert.deepEqual(parse(one.text).data, { k: 'v' });
    const list = await call('GET', CM, undefined, { Accept: 'application/yaml' });
    assert.equal(parse(list.text).kind, 'ConfigMapList');
    const json = await call('GET', `${CM}/as-yaml`, undefined, {
      Accept: 'application/json, application/yaml',
    });
    assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
  });
});
