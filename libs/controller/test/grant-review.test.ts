import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { start, type Emulator, type KubeObject } from '#apiserver-emulator';
import { createKubeClients } from '../src/clients.js';
import { GrantReviewer } from '../src/grant-review.js';

// The opt-in check asks, never reads: one SelfSubjectAccessReview per object per TTL, under the
// worker's own identity, and no request for the Secret or claim itself.

const SA = { namespace: 'system', name: 'worker' };
let emu: Emulator;

before(async () => {
  emu = await start({ port: 0, namespaces: ['ops', SA.namespace], rbac: true });
  emu.objects.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: SA } as KubeObject);
  const rbac = 'rbac.authorization.k8s.io';
  emu.objects.create({
    apiVersion: `${rbac}/v1`,
    kind: 'Role',
    metadata: { name: 'opt-in', namespace: 'ops' },
    rules: [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['db'] },
      {
        apiGroups: [''],
        resources: ['persistentvolumeclaims'],
        verbs: ['get'],
        resourceNames: ['backups'],
      },
    ],
  } as KubeObject);
  emu.objects.create({
    apiVersion: `${rbac}/v1`,
    kind: 'RoleBinding',
    metadata: { name: 'opt-in', namespace: 'ops' },
    roleRef: { apiGroup: rbac, kind: 'Role', name: 'opt-in' },
    subjects: [{ kind: 'ServiceAccount', ...SA }],
  } as KubeObject);
});

after(() => emu?.stop());

const SECRET = { resource: 'secrets', name: 'db' } as const;

function workerClients() {
  const kc = new KubeConfig();
  kc.loadFromString(emu.kubeconfigForServiceAccount(SA.namespace, SA.name));
  return createKubeClients(kc);
}

const reviews = () => emu.log.count({ resource: 'selfsubjectaccessreviews' });

test('answers from a SelfSubjectAccessReview, cached for the TTL, never reading the Secret', async () => {
  const clients = workerClients();
  let now = 0;
  const reviewer = new GrantReviewer({ ttlMs: 1000, clock: () => now });
  const before = reviews();

  assert.deepEqual(await reviewer.review(clients, 'ops', SECRET), { ...SECRET, allowed: true });
  assert.deepEqual(await reviewer.review(clients, 'ops', { resource: 'secrets', name: 'other' }), {
    resource: 'secrets',
    name: 'other',
    allowed: false,
  });
  assert.equal(reviews() - before, 2);
  now = 999;
  await reviewer.review(clients, 'ops', SECRET);
  assert.equal(reviews() - before, 2, 'a cached answer costs no request');
  now = 1000;
  await reviewer.review(clients, 'ops', SECRET);
  assert.equal(reviews() - before, 3, 'an expired answer is asked again');
  assert.equal(emu.log.count({ resource: 'secrets' }), 0);
});

test('a claim is asked about as persistentvolumeclaims, apart from a Secret of the same name', async () => {
  const clients = workerClients();
  const reviewer = new GrantReviewer();
  const claim = { resource: 'persistentvolumeclaims', name: 'backups' } as const;
  assert.deepEqual(await reviewer.review(clients, 'ops', claim), { ...claim, allowed: true });
  const sameName = { resource: 'secrets', name: 'backups' } as const;
  assert.deepEqual(await reviewer.review(clients, 'ops', sameName), {
    ...sameName,
    allowed: false,
  });
  assert.equal(emu.log.count({ resource: 'persistentvolumeclaims' }), 0);
});

test('a withdrawn grant is answered as such once the cached answer expires', async () => {
  const clients = workerClients();
  let now = 0;
  const reviewer = new GrantReviewer({ ttlMs: 1000, clock: () => now });
  assert.equal((await reviewer.review(clients, 'ops', SECRET)).allowed, true);
  const binding = emu.objects.get('rbac.authorization.k8s.io/v1', 'RoleBinding', 'opt-in', 'ops')!;
  emu.objects.delete('rbac.authorization.k8s.io/v1', 'RoleBinding', 'opt-in', 'ops');
  try {
    now = 500;
    assert.equal((await reviewer.review(clients, 'ops', SECRET)).allowed, true, 'still cached');
    now = 1000;
    assert.equal((await reviewer.review(clients, 'ops', SECRET)).allowed, false);
  } finally {
    const { resourceVersion: _rv, uid: _uid, ...metadata } = binding.metadata;
    emu.objects.create({ ...binding, metadata } as KubeObject);
  }
});
