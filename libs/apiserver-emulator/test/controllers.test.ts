import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Emulator, KubeObject } from '../src/index.js';
import { http, withEmulator } from './support.js';
import { eventually } from '#testing';

function configMap(name: string, ns: string, owner?: KubeObject, block = false): KubeObject {
  const metadata: KubeObject['metadata'] = { name, namespace: ns };
  if (owner)
    metadata.ownerReferences = [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: owner.metadata.name!,
        uid: owner.metadata.uid!,
        blockOwnerDeletion: block,
      },
    ];
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata };
}

const exists = (emu: Emulator, name: string, ns = 'gc') =>
  emu.objects.get('v1', 'ConfigMap', name, ns) !== undefined;

// docs/concepts/architecture/garbage-collection/; docs/tasks/administer-cluster/use-cascading-deletion/
describe('garbage collector and namespace lifecycle', () => {
  let emu: Emulator;
  let call: ReturnType<typeof http>;
  before(async () => {
    emu = await withEmulator({ namespaces: ['gc'] });
    call = http(emu);
  });
  after(() => emu.stop());

  test('background deletion removes dependents after the owner', async () => {
    const owner = emu.objects.create(configMap('bg-owner', 'gc'));
    emu.objects.create(configMap('bg-dep', 'gc', owner));
    const r = await call('DELETE', '/api/v1/namespaces/gc/configmaps/bg-owner', {
      propagationPolicy: 'Background',
    });
    assert.equal(r.status, 200);
    assert.equal(exists(emu, 'bg-owner'), false);
    await eventually('dependent collected', () => !exists(emu, 'bg-dep'));
  });

  test('foreground deletion keeps the owner until blocking dependents are gone', async () => {
    const owner = emu.objects.create(configMap('fg-owner', 'gc'));
    const dep = emu.objects.create({
      ...configMap('fg-dep', 'gc', owner, true),
      metadata: {
        ...configMap('fg-dep', 'gc', owner, true).metadata,
        finalizers: ['example.com/hold'],
      },
    });
    const r = await call('DELETE', '/api/v1/namespaces/gc/configmaps/fg-owner', {
      propagationPolicy: 'Foreground',
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.metadata.finalizers, ['foregroundDeletion']);
    await eventually(
      'dependent deleting',
      () => emu.objects.get('v1', 'ConfigMap', 'fg-dep', 'gc')?.metadata.deletionTimestamp,
    );
    assert.equal(exists(emu, 'fg-owner'), true, 'owner waits for the blocking dependent');
    emu.objects.patch('v1', 'ConfigMap', dep.metadata.name!, 'gc', {
      metadata: { finalizers: null },
    });
    await eventually('owner removed after its dependent', () => !exists(emu, 'fg-owner'));
  });

  test('orphan deletion keeps dependents and removes their ownerReferences', async () => {
    const owner = emu.objects.create(configMap('or-owner', 'gc'));
    emu.objects.create(configMap('or-dep', 'gc', owner));
    await call('DELETE', '/api/v1/namespaces/gc/configmaps/or-owner', {
      propagationPolicy: 'Orphan',
    });
    await eventually('owner gone', () => !exists(emu, 'or-owner'));
    const dep = emu.objects.get('v1', 'ConfigMap', 'or-dep', 'gc')!;
    assert.equal(dep.metadata.ownerReferences, undefined);
  });

  // docs/concepts/overview/working-with-objects/namespaces/ ; admission NamespaceLifecycle
  test('deleting a namespace terminates it, refuses new content, deletes content, then goes away', async () => {
    emu.objects.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    emu.objects.create({
      ...configMap('held', 'doomed'),
      metadata: { name: 'held', namespace: 'doomed', finalizers: ['example.com/hold'] },
    });
    const del = await call('DELETE', '/api/v1/namespaces/doomed');
    assert.equal(del.json.status.phase, 'Terminating');
    const refused = await call('POST', '/api/v1/namespaces/doomed/configmaps', {
      metadata: { name: 'new' },
    });
    assert.equal(refused.status, 403);
    assert.match(
      refused.json.message,
      /unable to create new content in namespace doomed because it is being terminated/,
    );
    await eventually(
      'content deleting',
      () => emu.objects.get('v1', 'ConfigMap', 'held', 'doomed')?.metadata.deletionTimestamp,
    );
    assert.ok(emu.objects.get('v1', 'Namespace', 'doomed'), 'namespace waits for its content');
    emu.objects.patch('v1', 'ConfigMap', 'held', 'doomed', { metadata: { finalizers: null } });
    await eventually('namespace removed', () => !emu.objects.get('v1', 'Namespace', 'doomed'));
  });
});

const cronJob = (name: string, schedule: string): KubeObject => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name, namespace: 'ops' },
  spec: {
    schedule,
    jobTemplate: {
      spec: {
        template: {
          spec: { restartPolicy: 'Never', containers: [{ name: 'backup', image: 'backup:1' }] },
        },
      },
    },
  },
});

interface CronJobStatus {
  active?: { name: string }[];
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
}

// docs/concepts/workloads/controllers/cron-jobs/ and job/ (status the controllers write)
describe('CronJob → Job → Pod simulation on a manual clock', () => {
  let emu: Emulator;
  const start = Date.parse('2026-05-29T02:00:00Z');
  before(async () => {
    emu = await withEmulator({
      namespaces: ['ops'],
      clock: { mode: 'manual', start },
      controllers: { jobs: true, cronJobs: true },
    });
  });
  after(() => emu.stop());

  const status = (name: string) =>
    (emu.objects.get('batch/v1', 'CronJob', name, 'ops')!.status ?? {}) as CronJobStatus;

  test('a CronJob fires when the clock reaches its schedule; a succeeded Job sets lastSuccessfulTime', async () => {
    emu.objects.create(cronJob('nightly', '10 2 * * *'));
    emu.clock.advance(9 * 60 * 1000);
    assert.equal(emu.objects.list('batch/v1', 'Job', 'ops').length, 0, 'not due yet');
    emu.clock.advance(60 * 1000);
    const jobName = `nightly-${Math.floor(Date.parse('2026-05-29T02:10:00Z') / 60000)}`;
    await eventually('job active', () => status('nightly').active?.[0]?.name === jobName);
    assert.equal(status('nightly').lastScheduleTime, '2026-05-29T02:10:00Z');
    const job = emu.objects.get('batch/v1', 'Job', jobName, 'ops')!;
    assert.equal(job.metadata.ownerReferences?.[0]?.kind, 'CronJob');
    await eventually(
      'job running',
      () =>
        (
          emu.objects.get('batch/v1', 'Job', jobName, 'ops')!.status as
            { active?: number } | undefined
        )?.active === 1,
    );
    const pods = emu.objects.list('v1', 'Pod', 'ops');
    assert.equal(pods.length, 1);
    assert.equal((pods[0]!.status as { phase: string }).phase, 'Running');
    const log = await fetch(`${emu.url}/api/v1/namespaces/ops/pods/${pods[0]!.metadata.name}/log`);
    assert.match(await log.text(), /is Running; the emulator runs no containers/);

    emu.clock.advance(30 * 1000);
    const done = emu.completeJob('ops', jobName);
    const js = done.status as {
      succeeded: number;
      completionTime: string;
      conditions: { type: string; status: string }[];
    };
    assert.equal(js.succeeded, 1);
    assert.equal(js.completionTime, '2026-05-29T02:10:30Z');
    assert.deepEqual(
      js.conditions.map((c) => c.type),
      ['SuccessCriteriaMet', 'Complete'],
    );
    assert.equal(
      (emu.objects.list('v1', 'Pod', 'ops')[0]!.status as { phase: string }).phase,
      'Succeeded',
    );
    await eventually(
      'lastSuccessfulTime',
      () => status('nightly').lastSuccessfulTime === '2026-05-29T02:10:30Z',
    );
    assert.equal(status('nightly').active, undefined);
  });

  test('runCronJob starts a Job now; failJob reports the failure like the Job controller', async () => {
    emu.objects.create(cronJob('adhoc', '0 0 1 1 *'));
    const job = emu.runCronJob('ops', 'adhoc');
    await eventually('active', () => status('adhoc').active?.length === 1);
    const failed = emu.failJob('ops', job.metadata.name!);
    const js = failed.status as {
      failed: number;
      completionTime?: string;
      conditions: { type: string; reason: string }[];
    };
    assert.equal(js.failed, 7, 'backoffLimit 6 + 1');
    assert.equal(js.completionTime, undefined);
    assert.deepEqual(
      js.conditions.map((c) => `${c.type}/${c.reason}`),
      ['FailureTarget/BackoffLimitExceeded', 'Failed/BackoffLimitExceeded'],
    );
    await eventually('no longer active', () => status('adhoc').active === undefined);
    assert.equal(status('adhoc').lastSuccessfulTime, undefined);
  });

  test('suspended CronJobs do not fire', () => {
    emu.objects.create({
      ...cronJob('paused', '* * * * *'),
      spec: { ...(cronJob('paused', '* * * * *').spec as object), suspend: true },
    });
    emu.clock.advance(5 * 60 * 1000);
    assert.equal(
      emu.objects
        .list('batch/v1', 'Job', 'ops')
        .filter((j) => j.metadata.name!.startsWith('paused-')).length,
      0,
    );
  });
});

describe('CronJob controller at scale', () => {
  // Each tick used to read every CronJob, so with thousands of them creating objects slowed to a
  // crawl. Now a tick looks only at the CronJobs whose schedule came due.
  test('a tick looks at the CronJobs that are due, not at the thousands that are not', async () => {
    const start = Date.parse('2026-05-29T02:00:00Z');
    const emu = await withEmulator({
      namespaces: ['ops'],
      clock: { mode: 'manual', start },
      controllers: { jobs: true, cronJobs: true },
    });
    try {
      const controller = emu.controllers.cronJobs!;
      for (let i = 0; i < 3000; i++) emu.objects.create(cronJob(`yearly-${i}`, '0 0 1 1 *'));
      for (let minute = 0; minute < 30; minute++) {
        emu.clock.advance(60 * 1000);
        emu.controllers.tick();
      }
      assert.equal(controller.examined, 0, 'no CronJob came due');

      emu.objects.create(cronJob('soon', '35 2 * * *'));
      emu.clock.advance(4 * 60 * 1000);
      assert.equal(controller.examined, 0, 'not due before 02:35');
      emu.clock.advance(60 * 1000);
      assert.equal(controller.examined, 1, 'the one due CronJob, once');
      const jobName = `soon-${Math.floor(Date.parse('2026-05-29T02:35:00Z') / 60000)}`;
      assert.ok(emu.objects.get('batch/v1', 'Job', jobName, 'ops'), 'it fired');
      for (let i = 0; i < 10; i++) emu.controllers.tick();
      assert.equal(controller.examined, 1, 'after its run it waits for the next day');
      emu.clock.advance(24 * 60 * 60 * 1000);
      assert.equal(controller.examined, 2, 'the next day, that one again and no other');
    } finally {
      await emu.stop();
    }
  });

  test('a CronJob resumed, rescheduled or deleted is due by its new state', async () => {
    const start = Date.parse('2026-05-29T02:00:00Z');
    const emu = await withEmulator({
      namespaces: ['ops'],
      clock: { mode: 'manual', start },
      controllers: { jobs: true, cronJobs: true },
    });
    const jobsOf = (name: string) =>
      emu.objects
        .list('batch/v1', 'Job', 'ops')
        .filter((j) => j.metadata.name!.startsWith(`${name}-`));
    try {
      emu.objects.create({
        ...cronJob('resumed', '5 2 * * *'),
        spec: { ...(cronJob('resumed', '5 2 * * *').spec as object), suspend: true },
      });
      emu.objects.create(cronJob('moved', '0 3 * * *'));
      emu.objects.create(cronJob('gone', '5 2 * * *'));
      emu.objects.delete('batch/v1', 'CronJob', 'gone', 'ops');
      emu.objects.patch('batch/v1', 'CronJob', 'moved', 'ops', { spec: { schedule: '5 2 * * *' } });
      emu.clock.advance(5 * 60 * 1000);
      assert.equal(jobsOf('resumed').length, 0, 'suspended');
      assert.equal(jobsOf('moved').length, 1, 'runs on its new schedule');
      assert.equal(jobsOf('gone').length, 0, 'deleted');
      emu.objects.patch('batch/v1', 'CronJob', 'resumed', 'ops', { spec: { suspend: false } });
      emu.controllers.tick();
      assert.equal(jobsOf('resumed').length, 1, 'resumed: runs the time it missed');
    } finally {
      await emu.stop();
    }
  });
});

describe('accelerated clock', () => {
  test('CronJobs fire on schedule and Jobs succeed by themselves', async () => {
    const emu = await withEmulator({
      namespaces: ['ops'],
      clock: { mode: 'accelerated', factor: 600 },
      controllers: { jobs: { outcome: 'succeed', durationMs: 5000 }, cronJobs: true },
    });
    try {
      emu.objects.create(cronJob('fast', '* * * * *'));
      await eventually(
        'a scheduled run succeeded',
        () =>
          (
            emu.objects.get('batch/v1', 'CronJob', 'fast', 'ops')!.status as
              CronJobStatus | undefined
          )?.lastSuccessfulTime,
        20000,
      );
    } finally {
      await emu.stop();
    }
  });
});
