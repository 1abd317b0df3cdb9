import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BackupJob } from '#api';
import { isApiError } from '#kube';
import { Logger } from '#observability';
import { type EventSpec, cronJobName } from '#reconciler';
import {
  ActionExecutor,
  EventRecorder,
  StepError,
  createKubeClients,
  type KubeClients,
} from '../src/index.js';
import {
  NAMESPACE,
  converge,
  createBackupJob,
  getBackupJob,
  getCronJob,
  sample,
  startHarness,
  type Harness,
} from './support.js';

/** The executor names the failed step; the API's answer is its cause. */
const isConflict = (err: unknown) => err instanceof StepError && isApiError(err.cause, 409);

describe('writes carry preconditions', () => {
  let h: Harness;
  let clients: KubeClients;
  let executor: ActionExecutor;
  before(async () => {
    h = await startHarness();
    clients = createKubeClients(h.kc);
    const recorder = new EventRecorder(clients, { controller: 'test', instance: 'test' });
    executor = new ActionExecutor(clients, recorder, new Logger({ sink: () => undefined }));
    createBackupJob(h, sample('stale'));
    await converge(h, `${NAMESPACE}/stale`);
  });
  after(() => h.stop());

  /** A read, then a write by someone else: the read is now stale. */
  function staleRead(): BackupJob {
    const read = getBackupJob(h, 'stale') as BackupJob;
    h.emu.objects.patch('ops.example.com/v1alpha1', 'BackupJob', 'stale', NAMESPACE, {
      metadata: { labels: { touched: String(Date.now()) } },
    });
    return read;
  }

  test('a status write from a stale read fails with 409 and changes nothing', async () => {
    const stale = staleRead();
    await assert.rejects(
      executor.run(
        [{ type: 'updateStatus', status: { ...stale.status, message: 'stale' } }],
        stale,
      ),
      isConflict,
    );
    assert.notEqual(getBackupJob(h, 'stale')?.status?.message, 'stale');
  });

  test('a finalizer write from a stale read fails with 409', async () => {
    const stale = staleRead();
    await assert.rejects(executor.run([{ type: 'removeFinalizer' }], stale), isConflict);
    assert.equal(getBackupJob(h, 'stale')?.metadata.finalizers?.length, 1);
  });

  test('a CronJob patch from a stale read fails with 409', async () => {
    const name = cronJobName('stale');
    const read = getCronJob(h, name)!;
    h.emu.objects.patch('batch/v1', 'CronJob', name, NAMESPACE, {
      metadata: { labels: { touched: 'x' } },
    });
    const patch = {
      metadata: { resourceVersion: read.metadata?.resourceVersion },
      spec: { schedule: '1 1 * * *' },
    };
    await assert.rejects(
      executor.run(
        [{ type: 'patchCronJob', name, patch, fields: ['spec.schedule'] }],
        getBackupJob(h, 'stale'),
      ),
      isConflict,
    );
    assert.equal(getCronJob(h, name)?.spec?.schedule, '10 2 * * *');
  });

  test('a delete names the uid it saw: a newer namesake is not deleted', async () => {
    const name = cronJobName('stale');
    await assert.rejects(
      executor.run(
        [{ type: 'deleteCronJob', name, uid: 'some-older-uid' }],
        getBackupJob(h, 'stale'),
      ),
      isConflict,
    );
    assert.ok(getCronJob(h, name));
  });
});

describe('EventRecorder aggregates repeats into a series', () => {
  let h: Harness;
  let clients: KubeClients;
  let now = new Date('2026-05-29T02:10:00Z');
  before(async () => {
    h = await startHarness();
    clients = createKubeClients(h.kc);
    createBackupJob(h, sample('events'));
  });
  after(() => h.stop());

  const event = (note: string): EventSpec => ({
    type: 'Warning',
    reason: 'CleanupFailed',
    action: 'Cleanup',
    note,
  });
  const events = () =>
    h.emu.objects.list('events.k8s.io/v1', 'Event', NAMESPACE) as unknown as {
      metadata: { name: string };
      note: string;
      series?: { count: number };
      regarding: { name: string; uid: string };
      reportingController: string;
      eventTime: string;
    }[];

  test('the same reason and note on the same object: one Event, its series counts', async () => {
    const recorder = new EventRecorder(clients, {
      controller: 'backup.ops.example.com/op',
      instance: 'w-1',
      clock: () => now,
    });
    const bj = getBackupJob(h, 'events')!;
    for (let i = 0; i < 3; i++) {
      await recorder.record(bj, event('cleanup failed'));
      now = new Date(now.getTime() + 1000);
    }
    await recorder.record(bj, event('something else'));
    const list = events();
    assert.equal(list.length, 2);
    const repeated = list.find((e) => e.note === 'cleanup failed');
    assert.equal(repeated?.series?.count, 3);
    assert.equal(repeated?.regarding.uid, bj.metadata.uid);
    assert.equal(repeated?.reportingController, 'backup.ops.example.com/op');
    assert.match(repeated?.eventTime ?? '', /\.\d{6}Z$/, 'MicroTime with microseconds');
  });

  test('an Event that expired is created again; the memory of series is bounded', async () => {
    const recorder = new EventRecorder(clients, {
      controller: 'c',
      instance: 'w-2',
      clock: () => now,
      maxSeries: 2,
    });
    const bj = getBackupJob(h, 'events')!;
    await recorder.record(bj, event('expiring'));
    const created = events().find((e) => e.note === 'expiring')!;
    h.emu.objects.delete('events.k8s.io/v1', 'Event', created.metadata.name, NAMESPACE);
    await recorder.record(bj, event('expiring'));
    assert.equal(events().filter((e) => e.note === 'expiring').length, 1);
    await recorder.record(bj, event('a'));
    await recorder.record(bj, event('b'));
    assert.equal(recorder.size, 2);
  });
});
