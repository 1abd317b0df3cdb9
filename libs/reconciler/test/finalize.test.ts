import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { FINALIZER } from '#api';
import { findCondition } from '../src/conditions.js';
import type { ReconcileInput } from '../src/world.js';
import {
  T0,
  applyActions,
  backupJob,
  cleanupJob,
  config,
  job,
  minutes,
  run,
  storedCronJobFor,
  types,
} from './support.js';

const deletedAt = minutes(60);

function deleting(policy: 'Retain' | 'Delete', finalizers: string[] | undefined = [FINALIZER]) {
  return backupJob({
    spec: { deletionPolicy: policy },
    metadata: { deletionTimestamp: deletedAt, finalizers },
  });
}

function world(partial: Partial<ReconcileInput>): ReconcileInput {
  return {
    backupJob: deleting('Delete'),
    cronJob: undefined,
    jobs: [],
    now: minutes(1, deletedAt),
    config,
    ...partial,
  };
}

function cleanupCondition(input: ReconcileInput) {
  return findCondition(input.backupJob?.status?.conditions, 'CleanupSucceeded');
}

/** The Job the controller would have created, with the outcome a cleanup pod produced. */
function finish(created: V1Job, state: 'succeeded' | 'failed', at: Date): V1Job {
  const attempt = Number(created.metadata?.labels?.['backup.ops.example.com/cleanup-attempt']);
  return cleanupJob(attempt, state, at);
}

describe('finalize', () => {
  test('no finalizer: nothing to do', () => {
    assert.deepEqual(run(world({ backupJob: deleting('Delete', []) })), {
      actions: [],
      result: { kind: 'done' },
    });
  });

  test('Retain: the finalizer is removed at once, nothing else', () => {
    const out = run(
      world({ backupJob: deleting('Retain'), cronJob: storedCronJobFor(backupJob()) }),
    );
    assert.deepEqual(types(out.actions), ['removeFinalizer']);
    assert.deepEqual(out.result, { kind: 'done' });
  });

  test('Delete: the owned CronJob is deleted first (with its uid) and cleanup waits', () => {
    const cronJob = storedCronJobFor(backupJob());
    const out = run(world({ cronJob }));
    assert.deepEqual(types(out.actions), ['deleteCronJob', 'updateStatus']);
    assert.deepEqual(out.actions[0], {
      type: 'deleteCronJob',
      name: 'mysql-daily-backup',
      uid: 'uid-cj-1',
    });
    assert.deepEqual(out.result, { kind: 'requeueAfter', delayMs: config.cleanupPollMs });
  });

  test('Delete: a CronJob this BackupJob does not control is not deleted', () => {
    const cronJob = storedCronJobFor(backupJob());
    cronJob.metadata!.ownerReferences = [];
    const out = run(world({ cronJob }));
    assert.equal(types(out.actions).includes('deleteCronJob'), false);
  });

  test('Delete: running backups are stopped and waited for', () => {
    const out = run(world({ jobs: [job('b-1', 'active'), job('b-0', 'succeeded', T0)] }));
    assert.deepEqual(types(out.actions), ['deleteJob', 'updateStatus']);
    assert.deepEqual(out.actions[0], { type: 'deleteJob', name: 'b-1', uid: 'uid-b-1' });
    const stopping = structuredClone(job('b-1', 'active'));
    stopping.metadata!.deletionTimestamp = deletedAt;
    const again = run(world({ jobs: [stopping] }));
    assert.deepEqual(types(again.actions), ['updateStatus'], 'no cleanup while a backup runs');
    assert.deepEqual(again.result, { kind: 'requeueAfter', delayMs: config.cleanupPollMs });
  });

  test('Delete: starts cleanup attempt 1 with the same storage mount, BACKUP_MODE=cleanup', () => {
    const out = run(world({}));
    assert.deepEqual(types(out.actions), ['createJob', 'event:CleanupStarted', 'updateStatus']);
    const create = out.actions[0];
    assert.ok(create?.type === 'createJob');
    const job = create.job;
    assert.equal(job.metadata?.name, 'mysql-daily-cleanup-1');
    assert.equal(job.metadata?.labels?.['app.kubernetes.io/component'], 'cleanup');
    assert.equal(job.metadata?.ownerReferences?.[0]?.uid, 'uid-bj-1');
    const pod = job.spec?.template.spec;
    const env = Object.fromEntries((pod?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(env['BACKUP_MODE'], 'cleanup');
    assert.equal(env['BACKUP_DESTINATION'], '/backups/ops/mysql-daily');
    assert.equal(pod?.volumes?.[0]?.persistentVolumeClaim?.claimName, 'backup-storage');
    const next = applyActions(world({}), out.actions);
    assert.equal(cleanupCondition(next)?.status, 'Unknown');
    assert.equal(next.backupJob?.status?.ready, false);
    assert.equal(findCondition(next.backupJob?.status?.conditions, 'Ready')?.reason, 'Deleting');
  });

  test('Delete: while cleanup runs nothing is written, it is polled', () => {
    const started = applyActions(world({}), run(world({})).actions);
    const out = run(started);
    assert.deepEqual(out.actions, []);
    assert.deepEqual(out.result, { kind: 'requeueAfter', delayMs: config.cleanupPollMs });
  });

  test('Delete: a failed cleanup keeps the object, says why, warns once, retries after backoff', () => {
    const failedAt = minutes(2, deletedAt);
    const input = world({
      jobs: [cleanupJob(1, 'failed', failedAt)],
      now: new Date(failedAt.getTime() + 4000),
    });
    const out = run(input);
    assert.deepEqual(types(out.actions), ['updateStatus', 'event:CleanupFailed']);
    // attempt 1 is retried cleanupRetryBaseMs after its failure.
    assert.deepEqual(out.result, {
      kind: 'requeueAfter',
      delayMs: config.cleanupRetryBaseMs - 4000,
    });
    const next = applyActions(input, out.actions);
    const c = cleanupCondition(next);
    assert.equal(c?.status, 'False');
    assert.equal(c?.reason, 'DeadlineExceeded');
    assert.match(c?.message ?? '', /cleanup Job mysql-daily-cleanup-1 failed/);
    assert.match(next.backupJob?.status?.message ?? '', /failed/);
    assert.deepEqual(run(next).actions, [], 'converged while waiting');
    const due = { ...next, now: new Date(failedAt.getTime() + config.cleanupRetryBaseMs) };
    assert.deepEqual(types(run(due).actions), ['createJob', 'event:CleanupStarted', 'deleteJob']);
  });

  test('Delete: before the retry time only a RequeueAfter until it', () => {
    const failedAt = minutes(2, deletedAt);
    const input = world({
      jobs: [cleanupJob(3, 'failed', failedAt)],
      now: new Date(failedAt.getTime() + 1000),
    });
    const first = applyActions(input, run(input).actions);
    const out = run(first);
    assert.deepEqual(out.actions, []);
    const retryAt = failedAt.getTime() + config.cleanupRetryBaseMs * 4;
    assert.deepEqual(out.result, { kind: 'requeueAfter', delayMs: retryAt - input.now.getTime() });
  });

  test('Delete: the retry is attempt 2 and retires attempt 1; the failure reason stays visible', () => {
    const failedAt = minutes(2, deletedAt);
    const input = world({ jobs: [cleanupJob(1, 'failed', failedAt)], now: minutes(30, deletedAt) });
    const retry = run(input);
    assert.deepEqual(types(retry.actions), [
      'createJob',
      'event:CleanupStarted',
      'deleteJob',
      'updateStatus',
      'event:CleanupFailed',
    ]);
    const create = retry.actions[0];
    assert.ok(create?.type === 'createJob');
    assert.equal(create.job.metadata?.name, 'mysql-daily-cleanup-2');
    assert.deepEqual(retry.actions[2], {
      type: 'deleteJob',
      name: 'mysql-daily-cleanup-1',
      uid: 'uid-mysql-daily-cleanup-1',
    });
    const after = applyActions(input, retry.actions);
    assert.equal(cleanupCondition(after)?.status, 'False');
    assert.deepEqual(run(after).actions, [], 'attempt 2 running: nothing more to do');
  });

  test('Delete: interrupted between creating attempt 2 and retiring attempt 1 → retire only', () => {
    const input = world({
      jobs: [cleanupJob(1, 'failed', minutes(2, deletedAt)), cleanupJob(2, 'active')],
    });
    const out = run(input);
    assert.deepEqual(
      out.actions.filter((a) => a.type !== 'updateStatus' && a.type !== 'emitEvent'),
      [{ type: 'deleteJob', name: 'mysql-daily-cleanup-1', uid: 'uid-mysql-daily-cleanup-1' }],
    );
  });

  test('Delete: success records it, emits an Event, then removes the finalizer', () => {
    const input = world({ jobs: [cleanupJob(1, 'succeeded', minutes(2, deletedAt))] });
    const out = run(input);
    assert.deepEqual(types(out.actions), [
      'updateStatus',
      'event:CleanupSucceeded',
      'removeFinalizer',
    ]);
    assert.deepEqual(out.result, { kind: 'done' });
    const next = applyActions(input, out.actions.slice(0, 2));
    assert.equal(cleanupCondition(next)?.status, 'True');
    assert.deepEqual(types(run(next).actions), ['removeFinalizer'], 'interrupted before removal');
  });

  test('Delete: fail, retry, succeed converges to the finalizer removed', () => {
    let input = world({});
    const outcomes: ('failed' | 'succeeded')[] = ['failed', 'failed', 'succeeded'];
    const events: string[] = [];
    for (let i = 0; i < 40 && input.backupJob?.metadata.finalizers?.includes(FINALIZER); i++) {
      const out = run(input);
      events.push(...out.actions.flatMap((a) => (a.type === 'emitEvent' ? [a.event.reason] : [])));
      input = applyActions(input, out.actions);
      const delay = out.result.kind === 'requeueAfter' ? out.result.delayMs : 0;
      const now = new Date(input.now.getTime() + delay);
      const jobs = input.jobs.map((j) =>
        jobOutcomeActive(j) ? finish(j, outcomes.shift() ?? 'succeeded', now) : j,
      );
      input = { ...input, jobs, now };
    }
    assert.equal(input.backupJob?.metadata.finalizers?.includes(FINALIZER), false);
    assert.deepEqual(events, [
      'CleanupStarted',
      'CleanupFailed',
      'CleanupStarted',
      'CleanupFailed',
      'CleanupStarted',
      'CleanupSucceeded',
    ]);
  });

  for (const [what, spec] of [
    ['an image outside the list', { image: 'evil.example.com/dump:1' }],
    ['a Secret not opted in', { secretRef: { name: 'db' } }],
    ['a claim not opted in', { storage: { claimName: 'nfs' } }],
  ] as const) {
    test(`${what}: no cleanup Job; the finalizer stays and Ready says why`, () => {
      const bj = backupJob({
        spec: { deletionPolicy: 'Delete', ...spec },
        metadata: { deletionTimestamp: deletedAt, finalizers: [FINALIZER] },
      });
      const out = run(world({ backupJob: bj }));
      assert.ok(!types(out.actions).includes('createJob'));
      assert.ok(!types(out.actions).includes('removeFinalizer'));
      const next = applyActions(world({ backupJob: bj }), out.actions);
      const ready = findCondition(next.backupJob?.status?.conditions, 'Ready');
      assert.match(ready?.reason ?? '', /NotAllowed$/);
      assert.match(ready?.message ?? '', /^cleanup cannot start: /);
      assert.deepEqual(out.result, { kind: 'requeueAfter', delayMs: config.refusedRecheckMs });
    });
  }
});

function jobOutcomeActive(job: V1Job): boolean {
  return (job.status?.conditions ?? []).length === 0;
}
