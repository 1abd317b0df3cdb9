import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FINALIZER, MANAGED_BY_VALUE } from '#api';
import { TerminalError } from '#queue';
import { cronJobName } from '#reconciler';
import { parseKey } from '../src/index.js';
import {
  NAMESPACE,
  converge,
  createBackupJob,
  eventsFor,
  finishJob,
  getBackupJob,
  getCronJob,
  patchSpec,
  sample,
  setJobOutcome,
  startHarness,
  writesDuring,
  type Harness,
} from './support.js';
import { condition, foreignCronJob } from '#testing';

describe('reconcileKey against the API emulator', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.stop());

  const key = (name: string) => `${NAMESPACE}/${name}`;

  test('the sample gets an owned CronJob and Ready=True with observedGeneration', async () => {
    const bj = createBackupJob(h, sample('mysql-daily'));
    const writes = await writesDuring(h.emu, () => h.reconcileKey(key('mysql-daily')));
    assert.deepEqual(writes, [
      'patch backupjobs',
      'create cronjobs',
      'create events',
      'patch backupjobs/status',
    ]);
    const cj = getCronJob(h, 'mysql-daily-backup');
    assert.ok(cj, 'CronJob created');
    const [ref] = cj.metadata?.ownerReferences ?? [];
    assert.equal(ref?.uid, bj.metadata.uid);
    assert.equal(ref?.controller, true);
    assert.equal(ref?.blockOwnerDeletion, true);
    assert.equal(cj.spec?.schedule, '10 2 * * *');
    const stored = getBackupJob(h, 'mysql-daily');
    assert.deepEqual(stored?.metadata.finalizers, [FINALIZER]);
    assert.equal(stored?.status?.ready, true);
    assert.equal(stored?.status?.observedGeneration, stored?.metadata.generation);
    assert.equal(condition(stored, 'Ready')?.status, 'True');
    assert.deepEqual(
      eventsFor(h, 'mysql-daily').map((e) => (e as unknown as { reason: string }).reason),
      ['CronJobCreated'],
    );
    // The watcher tells the operator's own writes from others' by this field manager.
    type Entry = { manager?: string; subresource?: string };
    const managers = (meta?: { managedFields?: Entry[] }, subresource?: string) =>
      (meta?.managedFields ?? [])
        .filter((e) => e.subresource === subresource)
        .map((e) => e.manager);
    assert.deepEqual(managers(cj.metadata), [MANAGED_BY_VALUE]);
    assert.deepEqual(managers(stored?.metadata, 'status'), [MANAGED_BY_VALUE]);
  });

  test('the BackupJob and its children are read in one round trip', async () => {
    // A slow answer for the BackupJob: a CronJob read that waited for it would start after it.
    const slow = h.emu.core.faults.addLatency({
      match: { verb: 'get', resource: 'backupjobs', name: 'mysql-daily' },
      fixedMs: 300,
    });
    const mark = h.emu.core.log.mark();
    try {
      await h.reconcileKey(key('mysql-daily'));
    } finally {
      h.emu.core.faults.remove(slow);
    }
    const reads = h.emu.core.log.entries({ since: mark, verb: ['get', 'list'] });
    const of = (resource: string) => reads.find((r) => r.resource === resource);
    const parent = of('backupjobs');
    assert.ok(parent, 'the BackupJob was read');
    for (const child of [of('cronjobs'), of('jobs')]) {
      assert.ok(child, 'the children were read');
      assert.ok(
        child.time - child.durationMs < parent.time,
        `${child.resource} was asked for ${Math.round(child.time - child.durationMs - parent.time)} ms after the BackupJob's answer`,
      );
    }
  });

  test('a new BackupJob: finalizer, then CronJob, then status, with no write waiting for an Event', async () => {
    createBackupJob(h, sample('ordered'));
    // A slow Event create: a status patch that waited for it would be asked for after its answer.
    const slow = h.emu.core.faults.addLatency({
      match: { verb: 'create', resource: 'events' },
      fixedMs: 300,
    });
    const mark = h.emu.core.log.mark();
    try {
      await h.reconcileKey(key('ordered'));
    } finally {
      h.emu.core.faults.remove(slow);
    }
    const writes = h.emu.core.log.entries({ since: mark, verb: ['create', 'patch'] });
    const asked = (r: { time: number; durationMs: number }) => r.time - r.durationMs;
    const finalizer = writes.find((r) => r.resource === 'backupjobs' && r.subresource === '');
    const cronJob = writes.find((r) => r.resource === 'cronjobs');
    const status = writes.find((r) => r.subresource === 'status');
    const event = writes.find((r) => r.resource === 'events');
    assert.ok(finalizer && cronJob && status && event, 'all four writes were made');
    assert.ok(
      finalizer.time <= asked(cronJob),
      'the CronJob was created after the finalizer landed',
    );
    assert.ok(cronJob.time <= asked(status), 'the status was written after the CronJob existed');
    assert.ok(asked(event) >= cronJob.time, 'the CronJobCreated Event followed the create');
    assert.ok(asked(status) < event.time, 'the status patch did not wait for the Event');
  });

  test('reconciling the unchanged BackupJob again makes zero writes', async () => {
    const writes = await writesDuring(h.emu, () => h.reconcileKey(key('mysql-daily')));
    assert.deepEqual(writes, []);
  });

  test('a schedule change reaches the CronJob; Ready lastTransitionTime stays', async () => {
    createBackupJob(h, sample('sched'));
    await converge(h, key('sched'));
    const before = getBackupJob(h, 'sched');
    patchSpec(h, 'sched', { schedule: '30 4 * * *' });
    await converge(h, key('sched'));
    const after = getBackupJob(h, 'sched');
    assert.equal(getCronJob(h, cronJobName('sched'))?.spec?.schedule, '30 4 * * *');
    assert.equal(after?.metadata.generation, 2);
    assert.equal(after?.status?.observedGeneration, 2);
    assert.equal(condition(after, 'Ready')?.observedGeneration, 2);
    assert.equal(
      condition(after, 'Ready')?.lastTransitionTime,
      condition(before, 'Ready')?.lastTransitionTime,
    );
  });

  test('an invalid schedule: Ready=False with reason and message, no CronJob, no retry loop', async () => {
    createBackupJob(h, sample('bad', { schedule: '0 0 L * *' }));
    await assert.rejects(h.reconcileKey(key('bad')), TerminalError);
    const stored = getBackupJob(h, 'bad');
    assert.equal(condition(stored, 'Ready')?.status, 'False');
    assert.equal(condition(stored, 'Ready')?.reason, 'InvalidSpec');
    assert.match(condition(stored, 'Ready')?.message ?? '', /day of month field "L"/);
    assert.equal(getCronJob(h, cronJobName('bad')), undefined);
    const writes = await writesDuring(h.emu, () =>
      assert.rejects(h.reconcileKey(key('bad')), TerminalError),
    );
    assert.deepEqual(writes, []);
  });

  test('a deleted CronJob is recreated', async () => {
    createBackupJob(h, sample('recreate'));
    await converge(h, key('recreate'));
    const name = cronJobName('recreate');
    const firstUid = getCronJob(h, name)?.metadata?.uid;
    h.emu.objects.delete('batch/v1', 'CronJob', name, NAMESPACE);
    assert.equal(getCronJob(h, name), undefined);
    await converge(h, key('recreate'));
    const again = getCronJob(h, name);
    assert.ok(again);
    assert.notEqual(again.metadata?.uid, firstUid);
  });

  test('an edited owned field is restored; fields others own are kept', async () => {
    createBackupJob(h, sample('edited'));
    await converge(h, key('edited'));
    const name = cronJobName('edited');
    h.emu.objects.patch('batch/v1', 'CronJob', name, NAMESPACE, {
      metadata: { labels: { team: 'dba' } },
      spec: { concurrencyPolicy: 'Allow', suspend: true },
    });
    await converge(h, key('edited'));
    const cj = getCronJob(h, name);
    assert.equal(cj?.spec?.concurrencyPolicy, 'Forbid');
    assert.equal(cj?.spec?.suspend, false);
    assert.equal(cj?.metadata?.labels?.['team'], 'dba');
  });

  test('a CronJob of that name owned by nobody here: CronJobConflict, left untouched', async () => {
    const name = cronJobName('taken');
    const foreign = h.emu.objects.create(foreignCronJob(NAMESPACE, name));
    createBackupJob(h, sample('taken'));
    const result = await converge(h, key('taken'));
    assert.ok((result as { requeueAfter: number }).requeueAfter > 0);
    const stored = getBackupJob(h, 'taken');
    assert.equal(condition(stored, 'Ready')?.reason, 'CronJobConflict');
    assert.equal(stored?.status?.ready, false);
    assert.equal(
      getCronJob(h, name)?.metadata?.resourceVersion,
      (foreign.metadata as { resourceVersion?: string }).resourceVersion,
    );
    const reasons = eventsFor(h, 'taken').map((e) => (e as unknown as { reason: string }).reason);
    assert.deepEqual(reasons, ['CronJobConflict']);
  });

  test('a Job that succeeded sets lastBackupTime; one that failed sets BackupSucceeded=False', async () => {
    createBackupJob(h, sample('jobs'));
    await converge(h, key('jobs'));
    const template = getCronJob(h, cronJobName('jobs'))?.spec?.jobTemplate ?? {};
    const succeededAt = new Date(Date.now() - 120_000);
    finishJob(h, template, 'jobs-backup-1', 'succeeded', succeededAt);
    await converge(h, key('jobs'));
    let stored = getBackupJob(h, 'jobs');
    assert.equal(stored?.status?.lastBackupTime, succeededAt.toISOString());
    assert.equal(condition(stored, 'BackupSucceeded')?.status, 'True');

    finishJob(h, template, 'jobs-backup-2', 'failed', new Date(Date.now() - 60_000));
    await converge(h, key('jobs'));
    stored = getBackupJob(h, 'jobs');
    assert.equal(condition(stored, 'BackupSucceeded')?.status, 'False');
    assert.equal(condition(stored, 'BackupSucceeded')?.reason, 'BackoffLimitExceeded');
    assert.equal(stored?.status?.lastBackupTime, succeededAt.toISOString());
    const reasons = eventsFor(h, 'jobs').map((e) => (e as unknown as { reason: string }).reason);
    assert.ok(reasons.includes('BackupFailed'));
  });

  test('delete with Retain: the finalizer goes at once and the BackupJob is gone', async () => {
    createBackupJob(h, sample('retain'));
    await converge(h, key('retain'));
    h.emu.objects.delete('ops.example.com/v1alpha1', 'BackupJob', 'retain', NAMESPACE);
    assert.ok(getBackupJob(h, 'retain')?.metadata.deletionTimestamp, 'held by the finalizer');
    assert.equal(await h.reconcileKey(key('retain')), undefined);
    assert.equal(getBackupJob(h, 'retain'), undefined);
    assert.equal(await h.reconcileKey(key('retain')), undefined, 'gone → done');
  });

  test('delete with Delete: cleanup Job; its failure keeps the object Terminating; a retry finishes', async () => {
    createBackupJob(h, sample('purge', { deletionPolicy: 'Delete' }));
    await converge(h, key('purge'));
    h.emu.objects.delete('ops.example.com/v1alpha1', 'BackupJob', 'purge', NAMESPACE);
    await converge(h, key('purge'));
    assert.equal(getCronJob(h, cronJobName('purge')), undefined, 'no new backups during cleanup');
    const jobs = () =>
      h.emu.objects
        .list('batch/v1', 'Job', NAMESPACE)
        .filter((j) => j.metadata.name?.startsWith('purge-cleanup'));
    const [first] = jobs();
    assert.equal(first?.metadata.name, 'purge-cleanup-1');
    const env = (
      first as unknown as {
        spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } };
      }
    ).spec.template.spec.containers[0]?.env;
    assert.equal(env?.find((e) => e.name === 'BACKUP_MODE')?.value, 'cleanup');

    // The cleanup pod fails: the object stays, status and a Warning say why.
    setJobOutcome(h, 'purge-cleanup-1', 'failed');
    await converge(h, key('purge'));
    const stored = getBackupJob(h, 'purge');
    assert.ok(stored, 'still Terminating');
    assert.equal(condition(stored, 'CleanupSucceeded')?.status, 'False');
    assert.equal(condition(stored, 'CleanupSucceeded')?.reason, 'BackoffLimitExceeded');
    const reasons = () =>
      eventsFor(h, 'purge').map((e) => (e as unknown as { reason: string }).reason);
    assert.ok(reasons().includes('CleanupFailed'));

    // Past the retry backoff, attempt 2 runs and succeeds: the finalizer goes.
    h.advanceClock(60 * 60_000);
    await converge(h, key('purge'));
    assert.deepEqual(
      jobs().map((j) => j.metadata.name),
      ['purge-cleanup-2'],
    );
    setJobOutcome(h, 'purge-cleanup-2', 'succeeded');
    await converge(h, key('purge'));
    assert.equal(getBackupJob(h, 'purge'), undefined);
    assert.ok(reasons().includes('CleanupSucceeded'));
    h.advanceClock(-60 * 60_000);
  });

  test('parseKey', () => {
    assert.deepEqual(parseKey('ops/a'), { namespace: 'ops', name: 'a' });
    assert.throws(() => parseKey('a'), TerminalError);
    assert.throws(() => parseKey('a/b/c'), TerminalError);
  });

  test('409 Conflict → backoff, not reported; the next run converges', async () => {
    createBackupJob(h, sample('conflict'));
    h.emu.core.faults.addError({
      code: 409,
      count: 1,
      match: { verb: 'create', resource: 'cronjobs' },
    });
    await assert.rejects(h.reconcileKey(key('conflict')), /^ReconcileError: Conflict/);
    assert.equal(condition(getBackupJob(h, 'conflict'), 'Ready'), undefined);
    await converge(h, key('conflict'));
    assert.ok(getCronJob(h, cronJobName('conflict')));
  });

  test('429 with Retry-After → requeue no sooner than asked; 5xx → error (backoff)', async () => {
    createBackupJob(h, sample('throttled'));
    h.emu.core.faults.addError({
      code: 429,
      count: 1,
      retryAfterSeconds: 3,
      match: { resource: 'backupjobs' },
    });
    assert.deepEqual(await h.reconcileKey(key('throttled')), { requeueAfter: 3000 });
    h.emu.core.faults.addError({ code: 503, count: 1, match: { resource: 'cronjobs' } });
    await assert.rejects(h.reconcileKey(key('throttled')), /ServiceUnavailable/);
    await converge(h, key('throttled'));
    assert.equal(getBackupJob(h, 'throttled')?.status?.ready, true);
  });
});

describe('reconcileKey run by the queue', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.stop());

  test('an aborted run rethrows the queue reason and makes no write', async () => {
    createBackupJob(h, sample('aborted'));
    const controller = new AbortController();
    const reason = new Error('lease lost');
    controller.abort(reason);
    const writes = await writesDuring(h.emu, () =>
      assert.rejects(
        h.reconcileKey(`${NAMESPACE}/aborted`, { signal: controller.signal }),
        (err) => err === reason,
      ),
    );
    assert.deepEqual(writes, []);
  });

  test('a run aborted while a request hangs ends with the reason', async () => {
    createBackupJob(h, sample('hung'));
    const fault = h.emu.core.faults.addLatency({
      fixedMs: 3_000,
      match: { resource: 'cronjobs' },
    });
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const run = h.reconcileKey(`${NAMESPACE}/hung`, { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 100);
    await assert.rejects(run, (err) => err === reason);
    h.emu.core.faults.remove(fault);
  });
});

describe('a failing reconcile shows in status and one Event series', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.stop());

  const key = (name: string) => `${NAMESPACE}/${name}`;
  type EventObject = { reason: string; note: string; series?: { count: number } };
  const events = (name: string) => eventsFor(h, name) as unknown as EventObject[];

  /** Runs the key `runs` times as the queue would, failures counted; returns the writes made. */
  async function failingRuns(name: string, from: number, runs: number): Promise<string[]> {
    const writes: string[] = [];
    for (let failures = from; failures < from + runs; failures++) {
      writes.push(
        ...(await writesDuring(h.emu, () =>
          assert.rejects(h.reconcileKey(key(name), { failures }), /^ReconcileError/),
        )),
      );
    }
    return writes;
  }

  test('500 on creating the CronJob: reported from the third failure, one status write, then cleared', async () => {
    createBackupJob(h, sample('storm'));
    const fault = h.emu.core.faults.addError({
      code: 500,
      match: { verb: 'create', resource: 'cronjobs' },
    });
    try {
      assert.deepEqual(await failingRuns('storm', 0, 2), [
        'patch backupjobs',
        'create cronjobs',
        'create cronjobs',
      ]);
      assert.equal(getBackupJob(h, 'storm')?.status, undefined, 'a blip is not reported');
      const writes = await failingRuns('storm', 2, 6);
      assert.equal(writes.filter((w) => w === 'patch backupjobs/status').length, 1);
      assert.equal(writes.filter((w) => w === 'create events').length, 1);
      assert.equal(writes.filter((w) => w === 'patch events').length, 5);
    } finally {
      h.emu.core.faults.remove(fault);
    }
    const stored = getBackupJob(h, 'storm');
    const ready = condition(stored, 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'APIServerError');
    assert.equal(
      ready?.message,
      'creating CronJob storm-backup failed with 500 InternalError: injected fault (500)',
    );
    assert.equal(stored?.status?.observedGeneration, undefined, 'no generation was reconciled');
    const [warning, ...more] = events('storm');
    assert.deepEqual(more, []);
    assert.equal(warning?.reason, 'APIServerError');
    assert.equal(warning?.note, ready?.message);
    assert.equal(warning?.series?.count, 6);

    await converge(h, key('storm'));
    const cleared = getBackupJob(h, 'storm');
    assert.equal(condition(cleared, 'Ready')?.status, 'True');
    assert.equal(cleared?.status?.observedGeneration, cleared?.metadata.generation);
  });

  test('500 on the status patch itself: the Event alone says it', async () => {
    createBackupJob(h, sample('mute'));
    const fault = h.emu.core.faults.addError({
      code: 500,
      match: { verb: 'patch', resource: 'backupjobs', subresource: 'status' },
    });
    try {
      const writes = await failingRuns('mute', 0, 4);
      assert.equal(writes.filter((w) => w === 'patch backupjobs/status').length, 4);
    } finally {
      h.emu.core.faults.remove(fault);
    }
    assert.equal(getBackupJob(h, 'mute')?.status, undefined);
    const [warning] = events('mute').filter((e) => e.reason === 'APIServerError');
    assert.equal(
      warning?.note,
      'writing status failed with 500 InternalError: injected fault (500)',
    );
    assert.equal(warning?.series?.count, 2, 'the third and fourth failures');
    await converge(h, key('mute'));
    assert.equal(condition(getBackupJob(h, 'mute'), 'Ready')?.status, 'True');
  });

  test('a persistent 409 is a stale read until the tenth in a row, then reported as Conflict', async () => {
    createBackupJob(h, sample('contended'));
    await converge(h, key('contended'));
    patchSpec(h, 'contended', { schedule: '5 1 * * *' });
    const fault = h.emu.core.faults.addError({
      code: 409,
      match: { verb: 'patch', resource: 'cronjobs' },
    });
    try {
      await failingRuns('contended', 0, 9);
      assert.equal(condition(getBackupJob(h, 'contended'), 'Ready')?.status, 'True');
      await failingRuns('contended', 9, 1);
    } finally {
      h.emu.core.faults.remove(fault);
    }
    const ready = condition(getBackupJob(h, 'contended'), 'Ready');
    assert.equal(ready?.reason, 'Conflict');
    assert.equal(
      ready?.message,
      'updating CronJob contended-backup failed with 409 Conflict: injected fault (409)',
    );
    assert.equal(getBackupJob(h, 'contended')?.status?.observedGeneration, 1);
    await converge(h, key('contended'));
    assert.equal(condition(getBackupJob(h, 'contended'), 'Ready')?.status, 'True');
    assert.equal(getBackupJob(h, 'contended')?.status?.observedGeneration, 2);
  });
});
