import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import type { Emulator } from '../src/index.js';
import { CRD_FILE, withEmulator } from './support.js';
import { eventually } from '#testing';

const GROUP = 'ops.example.com';
const VERSION = 'v1alpha1';

function createBackupJob(objects: k8s.CustomObjectsApi, name: string) {
  const body = {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'BackupJob',
    metadata: { name },
    spec: { target: 'mysql', schedule: '@daily' },
  };
  return objects.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: 'ops',
    plural: 'backupjobs',
    body,
  });
}

function apiError(e: unknown): { code: number; reason: string } {
  const err = e as { code: number; body: string };
  return { code: err.code, reason: JSON.parse(err.body).reason };
}

describe('@kubernetes/client-node 2 against the emulator', () => {
  let emu: Emulator;
  let kc: k8s.KubeConfig;

  before(async () => {
    emu = await withEmulator({ namespaces: ['ops'] });
    kc = new k8s.KubeConfig();
    kc.loadFromString(emu.kubeconfig);
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({ body: parse(readFileSync(CRD_FILE, 'utf8')) });
  });
  after(() => emu.stop());

  test('informer lists, watches, and relists after a 410', async () => {
    const objects = kc.makeApiClient(k8s.CustomObjectsApi);
    const path = `/apis/${GROUP}/${VERSION}/namespaces/ops/backupjobs`;
    const informer = k8s.makeInformer(
      kc,
      path,
      () =>
        objects.listNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: 'ops',
          plural: 'backupjobs',
        }) as never,
    );
    const seen: string[] = [];
    informer.on('add', (o: k8s.KubernetesObject) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o: k8s.KubernetesObject) => seen.push(`update ${o.metadata?.name}`));
    informer.on('delete', (o: k8s.KubernetesObject) => seen.push(`delete ${o.metadata?.name}`));
    await informer.start();
    try {
      await createBackupJob(objects, 'inf');
      await eventually('add event', () => seen.includes('add inf'));
      const lists = () => emu.core.log.count({ verb: 'list', resource: 'backupjobs' });
      const listsBefore = lists();
      assert.equal(emu.core.watches.expire({ resource: 'backupjobs' }), 1);
      await eventually('relist after 410', () => lists() > listsBefore);
      await objects.patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          namespace: 'ops',
          plural: 'backupjobs',
          name: 'inf',
          body: { spec: { target: 'pg' } },
        },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await eventually('update event after re-watch', () => seen.includes('update inf'));
      await objects.deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: 'ops',
        plural: 'backupjobs',
        name: 'inf',
      });
      await eventually('delete event', () => seen.includes('delete inf'));
    } finally {
      await informer.stop();
    }
  });

  test('CustomObjectsApi status patch with merge-patch touches only status', async () => {
    const objects = kc.makeApiClient(k8s.CustomObjectsApi);
    await createBackupJob(objects, 'st');
    const patched = (await objects.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: 'ops',
        plural: 'backupjobs',
        name: 'st',
        body: { status: { ready: true, observedGeneration: 1 } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as { status: { ready: boolean }; metadata: { generation: number } };
    assert.equal(patched.status.ready, true);
    assert.equal(patched.metadata.generation, 1);
  });

  test('KubernetesObjectApi: create, read, replace with conflicts, default strategic patch is 415 on a CR', async () => {
    const api = k8s.KubernetesObjectApi.makeApiClient(kc);
    const created = await api.create({
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'BackupJob',
      metadata: { name: 'koa', namespace: 'ops' },
      spec: { target: 'mysql', schedule: '@daily' },
    } as k8s.KubernetesObject);
    const read = await api.read({
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'BackupJob',
      metadata: { name: 'koa', namespace: 'ops' },
    });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
    await api.replace({
      ...read,
      spec: { target: 'pg', schedule: '@daily' },
    } as k8s.KubernetesObject);
    await assert.rejects(
      api.replace({ ...read, spec: { target: 'x', schedule: '@daily' } } as k8s.KubernetesObject),
      (e) => apiError(e).code === 409,
    );
    await assert.rejects(
      api.patch({
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'BackupJob',
        metadata: { name: 'koa', namespace: 'ops' },
        spec: { target: 'y' },
      } as k8s.KubernetesObject),
      (e) => apiError(e).code === 415,
    );
  });

  // docs/concepts/architecture/leases/ — leader election relies on optimistic concurrency
  test('CoordinationV1Api Lease create and replace with conflicts', async () => {
    const leases = kc.makeApiClient(k8s.CoordinationV1Api);
    const lease = await leases.createNamespacedLease({
      namespace: 'ops',
      body: {
        metadata: { name: 'leader' },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: new k8s.V1MicroTime() },
      },
    });
    const renewed = await leases.replaceNamespacedLease({
      namespace: 'ops',
      name: 'leader',
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
    });
    assert.equal(renewed.spec?.holderIdentity, 'b');
    await assert.rejects(
      leases.replaceNamespacedLease({ namespace: 'ops', name: 'leader', body: lease }),
      (e) => apiError(e).code === 409 && apiError(e).reason === 'Conflict',
    );
    await assert.rejects(
      leases.createNamespacedLease({ namespace: 'ops', body: lease }),
      (e) => apiError(e).reason === 'AlreadyExists',
    );
  });

  // docs/reference/kubernetes-api/cluster-resources/event-v1/ ; workloads/controllers/cron-jobs/
  test('EventsV1Api events show in CoreV1Api lists; BatchV1Api CronJob create, read and replace', async () => {
    const batch = kc.makeApiClient(k8s.BatchV1Api);
    const cj = await batch.createNamespacedCronJob({
      namespace: 'ops',
      body: {
        metadata: { name: 'nightly' },
        spec: {
          schedule: '10 2 * * *',
          jobTemplate: {
            spec: {
              template: {
                spec: { restartPolicy: 'Never', containers: [{ name: 'b', image: 'b:1' }] },
              },
            },
          },
        },
      },
    });
    assert.equal(cj.spec?.concurrencyPolicy, 'Allow', 'defaulted like the real server');
    const read = await batch.readNamespacedCronJob({ namespace: 'ops', name: 'nightly' });
    const replaced = await batch.replaceNamespacedCronJob({
      namespace: 'ops',
      name: 'nightly',
      body: { ...read, spec: { ...read.spec!, schedule: '@hourly' } },
    });
    assert.equal(replaced.metadata?.generation, 2);
    const events = kc.makeApiClient(k8s.EventsV1Api);
    await events.createNamespacedEvent({
      namespace: 'ops',
      body: {
        metadata: { generateName: 'nightly.' },
        eventTime: new k8s.V1MicroTime(),
        reportingController: 'backupjob-operator',
        reportingInstance: 'worker-1',
        action: 'Reconcile',
        reason: 'CronJobUpdated',
        type: 'Normal',
        note: 'schedule changed',
        regarding: {
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          name: 'nightly',
          namespace: 'ops',
          uid: cj.metadata!.uid,
        },
      },
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const list = await core.listNamespacedEvent({
      namespace: 'ops',
      fieldSelector: `involvedObject.uid=${cj.metadata!.uid}`,
    });
    assert.deepEqual(
      list.items.map((e) => [e.reason, e.message, e.source?.component]),
      [['CronJobUpdated', 'schedule changed', 'backupjob-operator']],
    );
  });
});
