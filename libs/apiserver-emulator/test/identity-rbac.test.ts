import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import type { Emulator } from '../src/index.js';
import { http, kubectl, withEmulator } from './support.js';

function grantConfigMapReader(emu: Emulator, ns: string, sa: string): void {
  emu.objects.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'cm-reader', namespace: ns },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
  });
  emu.objects.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'cm-reader', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
  });
}

// docs/reference/access-authn-authz/rbac/ ; authentication/#user-impersonation ; authorization/#checking-api-access
describe('identity and RBAC (enforced)', () => {
  let emu: Emulator;
  let call: ReturnType<typeof http>;
  before(async () => {
    emu = await withEmulator({ namespaces: ['app'], rbac: true, tls: true });
    call = http(emu);
    emu.objects.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'reader', namespace: 'app' },
    });
    emu.objects.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'app' },
    });
  });
  after(() => emu.stop());

  test('a ServiceAccount token is denied with the real 403 body until a RoleBinding grants access', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(emu.kubeconfigForServiceAccount('app', 'reader'));
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await assert.rejects(
      core.listNamespacedConfigMap({ namespace: 'app' }),
      (e: { code: number; body: string }) => {
        const status = JSON.parse(e.body);
        assert.equal(e.code, 403);
        assert.equal(status.reason, 'Forbidden');
        assert.equal(
          status.message,
          'configmaps is forbidden: User "system:serviceaccount:app:reader" cannot list resource "configmaps" in API group "" in the namespace "app"',
        );
        return true;
      },
    );
    grantConfigMapReader(emu, 'app', 'reader');
    const list = await core.listNamespacedConfigMap({ namespace: 'app' });
    assert.deepEqual(
      list.items.map((i) => i.metadata?.name),
      ['settings'],
    );
    await assert.rejects(
      core.deleteNamespacedConfigMap({ namespace: 'app', name: 'settings' }),
      (e: { code: number }) => e.code === 403,
    );
    assert.equal(
      emu.log.count({
        verb: 'list',
        resource: 'configmaps',
        user: 'system:serviceaccount:app:reader',
        code: 200,
      }),
      1,
    );
  });

  test('an unknown bearer token is 401', async () => {
    const r = await call('GET', '/api/v1/namespaces', undefined, { Authorization: 'Bearer nope' });
    assert.equal(r.status, 401);
    assert.equal(r.json.reason, 'Unauthorized');
  });

  test('impersonation and access reviews', async () => {
    const ssar = await call(
      'POST',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      { spec: { resourceAttributes: { verb: 'get', resource: 'configmaps', namespace: 'app' } } },
      { 'Impersonate-User': 'system:serviceaccount:app:reader' },
    );
    assert.equal(ssar.status, 201);
    assert.equal(ssar.json.status.allowed, true);
    assert.match(ssar.json.status.reason, /RoleBinding "cm-reader\/app" of Role "cm-reader"/);
    const sar = await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      spec: {
        user: 'bob',
        groups: ['devs'],
        resourceAttributes: { verb: 'get', resource: 'configmaps', namespace: 'app' },
      },
    });
    assert.equal(sar.json.status.allowed, false);
    const whoami = await call(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      {},
      { 'Impersonate-User': 'bob', 'Impersonate-Group': 'devs' },
    );
    assert.equal(whoami.json.status.userInfo.username, 'bob');
    assert.deepEqual(whoami.json.status.userInfo.groups, ['devs', 'system:authenticated']);
    const denied = await call('GET', '/api/v1/namespaces/app/secrets', undefined, {
      'Impersonate-User': 'bob',
    });
    assert.equal(denied.status, 403);
  });

  test('kubectl over https sends the ServiceAccount token; kubectl 1.32 protobuf bodies decode', async () => {
    const admin = kubectl(emu);
    const sa = kubectl(emu);
    try {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(sa.kubeconfig, emu.kubeconfigForServiceAccount('app', 'reader'));
      const who = await sa(['auth', 'whoami']);
      assert.match(who.stdout, /system:serviceaccount:app:reader/, who.stderr);
      const denied = await sa(['get', 'secrets', '-n', 'app']);
      assert.match(
        denied.stderr,
        /Error from server \(Forbidden\): secrets is forbidden: User "system:serviceaccount:app:reader" cannot list resource "secrets"/,
      );
      for (const args of [
        ['create', 'namespace', 'pb'],
        ['create', 'configmap', 'c', '-n', 'pb', '--from-literal=a=b'],
        ['create', 'secret', 'generic', 's', '-n', 'pb', '--from-literal=k=v'],
        ['create', 'serviceaccount', 'bot', '-n', 'pb'],
        ['create', 'role', 'r', '-n', 'pb', '--verb=get,list', '--resource=configmaps'],
        ['create', 'rolebinding', 'rb', '-n', 'pb', '--role=r', '--serviceaccount=pb:bot'],
        ['create', 'clusterrole', 'cr', '--verb=get', '--resource=namespaces'],
        ['create', 'clusterrolebinding', 'crb', '--clusterrole=cr', '--serviceaccount=pb:bot'],
      ]) {
        const r = await admin(args);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      }
      assert.deepEqual(emu.objects.get('v1', 'ConfigMap', 'c', 'pb')?.data, { a: 'b' });
      assert.equal(emu.objects.get('v1', 'Secret', 's', 'pb')?.type, 'Opaque');
      assert.equal(
        Buffer.from(
          (emu.objects.get('v1', 'Secret', 's', 'pb')?.data as { k: string }).k,
          'base64',
        ).toString(),
        'v',
      );
      const yes = await admin([
        'auth',
        'can-i',
        'list',
        'configmaps',
        '-n',
        'pb',
        '--as=system:serviceaccount:pb:bot',
      ]);
      assert.equal(yes.stdout.trim(), 'yes');
      const no = await admin([
        'auth',
        'can-i',
        'delete',
        'configmaps',
        '-n',
        'pb',
        '--as=system:serviceaccount:pb:bot',
      ]);
      assert.equal(no.stdout.trim(), 'no');
      const token = await admin(['create', 'token', 'bot', '-n', 'pb']);
      assert.equal(token.code, 0, token.stderr);
      assert.equal(
        emu.core.authn.userForToken(token.stdout.trim())?.username,
        'system:serviceaccount:pb:bot',
      );
    } finally {
      admin.cleanup();
      sa.cleanup();
    }
  });
});
