import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API_VERSION, KIND } from '#api';
import type { KubeObject } from '#apiserver-emulator';
import { permissions } from '#rbac';
import {
  NAMESPACE,
  converge,
  createBackupJob,
  getBackupJob,
  sample,
  setJobOutcome,
  startHarness,
  type Harness,
} from './support.js';
import { condition } from '#testing';

const SA = { namespace: 'backup-operator-system', name: 'worker' };
const ROLE = 'backupjob-worker';

/** The worker's ClusterRole as generated for the chart, optionally without one verb. */
function workerRole(without?: { resource: string; verb: string }): KubeObject {
  const rules = permissions.worker
    .filter((rule) => rule.scope === 'cluster')
    .map((rule) => ({
      apiGroups: [...rule.apiGroups],
      resources: [...rule.resources],
      verbs: rule.verbs.filter(
        (v) => !(without && rule.resources.includes(without.resource) && v === without.verb),
      ),
    }));
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: ROLE },
    rules,
  } as unknown as KubeObject;
}

describe('reconcileKey with the worker RBAC rules enforced', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ serviceAccount: SA });
    h.emu.objects.create(workerRole());
    h.emu.objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: ROLE },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ROLE },
      subjects: [{ kind: 'ServiceAccount', name: SA.name, namespace: SA.namespace }],
    } as unknown as KubeObject);
  });
  after(() => h.stop());

  function setRole(role: KubeObject): void {
    const current = h.emu.objects.get('rbac.authorization.k8s.io/v1', 'ClusterRole', ROLE);
    h.emu.objects.update({
      ...role,
      metadata: { ...role.metadata, resourceVersion: current?.metadata.resourceVersion },
    });
  }

  test('the rules the worker is granted are enough to reconcile and to clean up on delete', async () => {
    createBackupJob(h, sample('granted', { deletionPolicy: 'Delete' }));
    await converge(h, `${NAMESPACE}/granted`);
    assert.equal(getBackupJob(h, 'granted')?.status?.ready, true);
    h.emu.objects.delete(API_VERSION, KIND, 'granted', NAMESPACE);
    await converge(h, `${NAMESPACE}/granted`);
    setJobOutcome(h, 'granted-cleanup-1', 'succeeded');
    await converge(h, `${NAMESPACE}/granted`);
    assert.equal(getBackupJob(h, 'granted'), undefined);
    assert.equal(h.emu.core.log.count({ code: 403 }), 0);
  });

  test('a missing permission is logged by verb, resource and namespace, and shown in Ready', async () => {
    setRole(workerRole({ resource: 'cronjobs', verb: 'create' }));
    createBackupJob(h, sample('denied'));
    const logged = h.logLines.length;
    await assert.rejects(h.reconcileKey(`${NAMESPACE}/denied`), /Forbidden/);
    const ready = condition(getBackupJob(h, 'denied'), 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'Forbidden');
    assert.match(ready?.message ?? '', /may not create cronjobs\.batch in namespace ops/);
    const line = h.logLines
      .slice(logged)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['level'] === 'error');
    assert.equal(line?.['verb'], 'create');
    assert.equal(line?.['resource'], 'cronjobs');
    assert.equal(line?.['group'], 'batch');
    assert.equal(line?.['namespace'], 'ops');

    setRole(workerRole());
    await converge(h, `${NAMESPACE}/denied`);
    assert.equal(condition(getBackupJob(h, 'denied'), 'Ready')?.status, 'True');
  });
});
