import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MANAGED_BY_VALUE } from '#api';
import { isApiError } from '#kube';
import { createKubeClients, microTime, type KubeClients } from '../src/clients.js';
import { NAMESPACE, startHarness, type Harness } from './support.js';

let h: Harness;
let clients: KubeClients;
before(async () => {
  h = await startHarness();
  clients = createKubeClients(h.kc);
});
after(() => h.stop());

test('a MicroTime is RFC 3339 with exactly six fractional digits', () => {
  assert.equal(microTime(new Date('2026-12-06T05:23:00.123Z')), '2026-12-06T05:23:00.123000Z');
});

test('writes name the operator as their field manager, which the watcher tells its own by', async () => {
  await clients.createCronJob(NAMESPACE, {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'managed' },
    spec: {
      schedule: '@daily',
      jobTemplate: {
        spec: {
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
          },
        },
      },
    },
  });
  const cronJob = await clients.getCronJob({ namespace: NAMESPACE, name: 'managed' });
  assert.deepEqual(
    cronJob?.metadata?.managedFields?.map((entry) => entry.manager),
    [MANAGED_BY_VALUE],
  );
});

test('a read of a missing object is undefined; a failed write is a KubeApiError with its reason', async () => {
  assert.equal(await clients.getBackupJob({ namespace: NAMESPACE, name: 'absent' }), undefined);
  const patched = clients.patchBackupJob({ namespace: NAMESPACE, name: 'absent' }, {});
  await assert.rejects(patched, (err) => isApiError(err, 404) && err.reason === 'NotFound');
});

test('a write under an aborted run is never sent and fails with the run’s reason', async () => {
  const reason = new Error('lease lost');
  const aborted = clients.withSignal(AbortSignal.abort(reason));
  const mark = h.emu.core.log.mark();
  await assert.rejects(
    aborted.createJob(NAMESPACE, { metadata: { name: 'never' } }),
    (err) => err === reason,
  );
  assert.deepEqual(h.emu.core.log.entries({ since: mark }), []);
});
