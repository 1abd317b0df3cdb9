import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { start, type Emulator, type KubeObject } from '#apiserver-emulator';
import { backupJobCrdDocument, runKubectl, type KubectlResult } from '#testing';
import { RELEASE, renderChart } from './support/helm.js';

// The chart's ValidatingAdmissionPolicy, as `helm template` renders it for a cluster that serves
// admissionregistration.k8s.io/v1, applied with kubectl to the API emulator with RBAC enforced,
// and exercised by users with the real kubectl: who may set spec.image, spec.secretRef and
// spec.storage.claimName on create and on update, and what the rejection says.

const NS = 'team';
const POLICY = `${RELEASE}-backupjob-author`;
const RBAC = 'rbac.authorization.k8s.io';
const WORKER = 'system:serviceaccount:backup-operator-system:backup-operator-worker';

let emu: Emulator;
let dir: string;
let kubeconfig: string;

function kubectl(args: string[], input?: string): Promise<KubectlResult> {
  return runKubectl(kubeconfig, args, { input });
}

/** A Role in the namespace and its binding to one user. */
function grant(user: string, rules: Record<string, unknown>[]): void {
  const name = user.replaceAll(':', '-');
  emu.objects.create({
    apiVersion: `${RBAC}/v1`,
    kind: 'Role',
    metadata: { name, namespace: NS },
    rules,
  } as KubeObject);
  const subject = user.startsWith('system:serviceaccount:')
    ? { kind: 'ServiceAccount', name: user.split(':')[3], namespace: user.split(':')[2] }
    : { apiGroup: RBAC, kind: 'User', name: user };
  emu.objects.create({
    apiVersion: `${RBAC}/v1`,
    kind: 'RoleBinding',
    metadata: { name, namespace: NS },
    roleRef: { apiGroup: RBAC, kind: 'Role', name },
    subjects: [subject],
  } as KubeObject);
}

const writeBackupJobs = {
  apiGroups: ['ops.example.com'],
  resources: ['backupjobs'],
  verbs: ['create', 'get', 'patch', 'update'],
};

before(async () => {
  emu = await start({ port: 0, rbac: true, namespaces: [NS] });
  dir = mkdtempSync(join(tmpdir(), 'admission-policy-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, emu.kubeconfig);
  emu.objects.create(backupJobCrdDocument());
  grant('author', [writeBackupJobs]);
  grant('podmaker', [writeBackupJobs, { apiGroups: [''], resources: ['pods'], verbs: ['create'] }]);
  grant('secretreader', [
    writeBackupJobs,
    { apiGroups: [''], resources: ['secrets'], resourceNames: ['db'], verbs: ['get'] },
  ]);
  grant(WORKER, [writeBackupJobs]);
  const served = ['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy'];
  const docs = renderChart([], [], served).filter((o) =>
    o.kind.startsWith('ValidatingAdmissionPolicy'),
  );
  assert.equal(docs.length, 2);
  const applied = await kubectl(['apply', '-f', '-'], docs.map((d) => stringify(d)).join('---\n'));
  assert.equal(applied.code, 0, applied.stderr);
});

after(async () => {
  await emu?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let counter = 0;

function manifest(name: string, spec: Record<string, unknown>): string {
  return stringify({
    apiVersion: 'ops.example.com/v1alpha1',
    kind: 'BackupJob',
    metadata: { name, namespace: NS },
    spec: { target: 'mysql', schedule: '@daily', ...spec },
  });
}

function createAs(user: string, spec: Record<string, unknown>): Promise<KubectlResult> {
  return kubectl(['create', '-f', '-', '--as', user], manifest(`bj-${++counter}`, spec));
}

const denied = (user: string, detail: string) =>
  new RegExp(
    `is forbidden: ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request: ${user} may not set ${detail}`,
  );

describe("the chart's admission policy on create", () => {
  const cases: [string, string, Record<string, unknown>, RegExp | undefined][] = [
    ['an author, a BackupJob that sets none of them', 'author', {}, undefined],
    [
      'an author, spec.image',
      'author',
      { image: 'registry.example.com/x:1' },
      denied('author', 'spec\\.image: they cannot create pods in namespace team$'),
    ],
    [
      'an author, spec.secretRef',
      'author',
      { secretRef: { name: 'db' } },
      denied('author', 'spec\\.secretRef: they cannot get secret db in namespace team$'),
    ],
    [
      'an author, spec.storage.claimName',
      'author',
      { storage: { claimName: 'data' } },
      denied(
        'author',
        'spec\\.storage\\.claimName: they cannot create pods in namespace team, so they could not mount persistentvolumeclaim data themselves$',
      ),
    ],
    [
      'someone who may create pods, spec.image and a claim',
      'podmaker',
      { image: 'registry.example.com/x:1', storage: { claimName: 'data' } },
      undefined,
    ],
    [
      'someone who may create pods, a Secret they cannot get',
      'podmaker',
      { secretRef: { name: 'db' } },
      denied('podmaker', 'spec\\.secretRef'),
    ],
    [
      'someone who may get the Secret, that Secret',
      'secretreader',
      { secretRef: { name: 'db' } },
      undefined,
    ],
    [
      'someone who may get one Secret, another',
      'secretreader',
      { secretRef: { name: 'other' } },
      denied('secretreader', 'spec\\.secretRef: they cannot get secret other'),
    ],
  ];
  for (const [what, user, spec, expected] of cases) {
    test(`${what}: ${expected ? 'rejected' : 'admitted'}`, async () => {
      const result = await createAs(user, spec);
      if (!expected) {
        assert.equal(result.code, 0, result.stderr);
        return;
      }
      assert.notEqual(result.code, 0);
      assert.match(result.stderr.trim(), /^Error from server \(Forbidden\): /);
      assert.match(result.stderr.trim(), expected);
    });
  }
});

describe("the chart's admission policy on update", () => {
  const name = 'existing';
  before(async () => {
    // Made by an admin, who may do all three.
    const spec = {
      image: 'registry.example.com/x:1',
      secretRef: { name: 'db' },
      storage: { claimName: 'data' },
    };
    const created = await kubectl(['create', '-f', '-'], manifest(name, spec));
    assert.equal(created.code, 0, created.stderr);
  });

  const patchAs = (user: string, patch: Record<string, unknown>) =>
    kubectl([
      'patch',
      'backupjob',
      name,
      '-n',
      NS,
      '--type',
      'merge',
      '-p',
      JSON.stringify(patch),
      '--as',
      user,
    ]);

  test('an author may change other fields: values left as they were pass', async () => {
    const result = await patchAs('author', { spec: { schedule: '@weekly' } });
    assert.equal(result.code, 0, result.stderr);
  });

  test("the operator's finalizer write passes, though its identity may do none of the three", async () => {
    const result = await patchAs(WORKER, {
      metadata: { finalizers: ['backup.ops.example.com/finalizer'] },
    });
    assert.equal(result.code, 0, result.stderr);
  });

  for (const [field, patch] of [
    ['spec.image', { image: 'registry.example.com/y:2' }],
    ['spec.secretRef', { secretRef: { name: 'another' } }],
    ['spec.storage.claimName', { storage: { claimName: 'elsewhere' } }],
  ] as const) {
    test(`an author may not change ${field}`, async () => {
      const result = await patchAs('author', { spec: patch });
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, denied('author', field.replaceAll('.', '\\.')));
    });
  }
});
