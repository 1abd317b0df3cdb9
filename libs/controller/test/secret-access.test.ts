import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { start, type Emulator, type KubeObject } from '#apiserver-emulator';
import { createKubeClients } from '../src/clients.js';
import { SecretAccessReviewer } from '../src/secret-access.js';

// The opt-in check asks, never reads: one SelfSubjectAccessReview per Secret per TTL, under the
// worker's own identity, and no request for the Secret itself.

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
    rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['db'] }],
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

test('answers from a SelfSubjectAccessReview, cached for the TTL, never reading the Secret', async () => {
  const kc = new KubeConfig();
  kc.loadFromString(emu.kubeconfigForServiceAccount(SA.namespace, SA.name));
  const clients = createKubeClients(kc);
  let now = 0;
  const reviewer = new SecretAccessReviewer({ ttlMs: 1000, clock: () => now });
  const reviews = () => emu.log.count({ resource: 'selfsubjectaccessreviews' });

  assert.deepEqual(await reviewer.review(clients, 'ops', 'db'), { name: 'db', allowed: true });
  assert.deepEqual(await reviewer.review(clients, 'ops', 'other'), {
    name: 'other',
    allowed: false,
  });
  assert.equal(reviews(), 2);
  now = 999;
  await reviewer.review(clients, 'ops', 'db');
  assert.equal(reviews(), 2, 'a cached answer costs no request');
  now = 1000;
  await reviewer.review(clients, 'ops', 'db');
  assert.equal(reviews(), 3, 'an expired answer is asked again');
  assert.equal(emu.log.count({ resource: 'secrets' }), 0);
});
