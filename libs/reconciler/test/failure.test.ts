import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BackupJob } from '#api';
import type { Action } from '../src/actions.js';
import { findCondition } from '../src/conditions.js';
import {
  FAILURE_REASONS,
  REPORT_FROM_FAILURE,
  failureMessage,
  onFailure,
  type FailedStep,
  type FailureKind,
  type ReconcileFailure,
} from '../src/failure.js';
import { T0, applyActions, backupJob, config, minutes, run, types } from './support.js';

/** A BackupJob the operator reconciled at generation 1, then edited to generation 2. */
function reconciledThenEdited(): BackupJob {
  const input = { backupJob: backupJob(), cronJob: undefined, jobs: [], now: T0, config };
  let world = applyActions(input, run(input).actions);
  world = applyActions(world, run(world).actions);
  const bj = world.backupJob!;
  return { ...bj, metadata: { ...bj.metadata, generation: 2 } };
}

const CODES: Record<FailureKind, { code: number; apiReason: string; message: string }> = {
  transient: { code: 500, apiReason: 'InternalError', message: 'etcdserver: request timed out' },
  forbidden: { code: 403, apiReason: 'Forbidden', message: 'cronjobs.batch is forbidden' },
  invalid: {
    code: 422,
    apiReason: 'Invalid',
    message: 'CronJob.batch "mysql-daily-backup" is invalid: spec.schedule: Invalid value',
  },
  conflict: {
    code: 409,
    apiReason: 'Conflict',
    message: 'Operation cannot be fulfilled: the object has been modified',
  },
  notFound: { code: 404, apiReason: 'NotFound', message: 'cronjobs "x" not found' },
};

function failure(
  kind: FailureKind,
  step: FailedStep = 'createCronJob',
  extra: Partial<ReconcileFailure> = {},
): ReconcileFailure {
  return { kind, step, object: 'mysql-daily-backup', ...CODES[kind], ...extra };
}

function statusOf(actions: readonly Action[]) {
  const write = actions.find((a) => a.type === 'updateStatus');
  return write?.type === 'updateStatus' ? write.status : undefined;
}

function event(actions: readonly Action[]) {
  const emit = actions.find((a) => a.type === 'emitEvent');
  return emit?.type === 'emitEvent' ? emit.event : undefined;
}

describe('onFailure: when a failure is reported', () => {
  const rows: { kind: FailureKind; reportedFrom: number }[] = [
    { kind: 'forbidden', reportedFrom: 1 },
    { kind: 'invalid', reportedFrom: 1 },
    { kind: 'transient', reportedFrom: 3 },
    { kind: 'conflict', reportedFrom: 10 },
    { kind: 'notFound', reportedFrom: 10 },
  ];
  for (const { kind, reportedFrom } of rows) {
    test(`${kind}: silent before failure ${reportedFrom} in a row, reported from it; backs off either way`, () => {
      assert.equal(REPORT_FROM_FAILURE[kind], reportedFrom);
      const bj = reconciledThenEdited();
      for (let failures = 0; failures < reportedFrom + 2; failures++) {
        const out = onFailure({ backupJob: bj, failure: failure(kind), failures, now: T0 });
        const due = failures + 1 >= reportedFrom;
        assert.equal(out.reported, due, `failure ${failures + 1}`);
        assert.deepEqual(
          types(out.actions),
          due ? ['updateStatus', `event:${FAILURE_REASONS[kind]}`] : [],
        );
        assert.equal(out.result.kind, 'error');
      }
    });
  }

  test('a Retry-After is honoured as a RequeueAfter and not reported (the server set the pace)', () => {
    const out = onFailure({
      backupJob: reconciledThenEdited(),
      failure: failure('transient', 'createCronJob', { code: 429, retryAfterMs: 3000 }),
      failures: 20,
      now: T0,
    });
    assert.deepEqual(out.result, { kind: 'requeueAfter', delayMs: 3000 });
    assert.deepEqual(out.actions, []);
  });

  test('a failure before the BackupJob was read has nothing to report on', () => {
    const out = onFailure({
      backupJob: undefined,
      failure: failure('forbidden', 'read'),
      failures: 5,
      now: T0,
    });
    assert.equal(out.reported, false);
    assert.deepEqual(out.actions, []);
    assert.equal(out.result.kind, 'error');
  });
});

describe('onFailure: what the report says', () => {
  const steps: {
    step: FailedStep;
    object?: string;
    says: RegExp;
    action: string;
    related?: string;
  }[] = [
    { step: 'addFinalizer', says: /^adding the finalizer failed/, action: 'AddFinalizer' },
    { step: 'removeFinalizer', says: /^removing the finalizer failed/, action: 'RemoveFinalizer' },
    {
      step: 'createCronJob',
      object: 'mysql-daily-backup',
      says: /^creating CronJob mysql-daily-backup failed/,
      action: 'Create',
      related: 'CronJob',
    },
    {
      step: 'patchCronJob',
      object: 'mysql-daily-backup',
      says: /^updating CronJob mysql-daily-backup failed/,
      action: 'Update',
      related: 'CronJob',
    },
    {
      step: 'deleteCronJob',
      object: 'mysql-daily-backup',
      says: /^deleting CronJob mysql-daily-backup failed/,
      action: 'Delete',
      related: 'CronJob',
    },
    {
      step: 'createJob',
      object: 'mysql-daily-cleanup-1',
      says: /^creating Job mysql-daily-cleanup-1 failed/,
      action: 'Create',
      related: 'Job',
    },
    {
      step: 'deleteJob',
      object: 'mysql-daily-cleanup-1',
      says: /^deleting Job mysql-daily-cleanup-1 failed/,
      action: 'Delete',
      related: 'Job',
    },
    { step: 'read', says: /^reading the BackupJob and its children failed/, action: 'Read' },
    {
      step: 'reviewGrants',
      object: 'secrets/db-creds',
      says: /^checking whether the namespace opted in secrets\/db-creds failed/,
      action: 'Review',
    },
  ];
  for (const row of steps) {
    test(`${row.step}: Ready=False with the step and the API's message; one Warning Event`, () => {
      const bj = reconciledThenEdited();
      const out = onFailure({
        backupJob: bj,
        failure: failure('transient', row.step, { object: row.object }),
        failures: 2,
        now: minutes(5),
      });
      const status = statusOf(out.actions)!;
      const ready = findCondition(status.conditions, 'Ready')!;
      assert.equal(ready.status, 'False');
      assert.equal(ready.reason, 'APIServerError');
      assert.match(ready.message, row.says);
      assert.match(ready.message, / failed with 500 InternalError: etcdserver: request timed out$/);
      assert.equal(ready.lastTransitionTime, minutes(5).toISOString(), 'Ready flipped');
      assert.equal(status.ready, false);
      assert.equal(status.message, ready.message);
      // That generation was not reconciled: status.observedGeneration still names the last one.
      assert.equal(status.observedGeneration, 1);
      assert.equal(ready.observedGeneration, 2);
      const note = event(out.actions)!;
      assert.deepEqual(
        { type: note.type, reason: note.reason, action: note.action, note: note.note },
        { type: 'Warning', reason: 'APIServerError', action: row.action, note: ready.message },
      );
      assert.equal(note.related?.kind, row.related);
      assert.equal(note.related?.name, row.related && row.object);
    });
  }

  test('the other conditions and fields of status are kept', () => {
    const bj = reconciledThenEdited();
    const before = bj.status!;
    const out = onFailure({ backupJob: bj, failure: failure('transient'), failures: 2, now: T0 });
    const status = statusOf(out.actions)!;
    assert.equal(status.cronJobName, before.cronJobName);
    const others = (s: typeof status) => s.conditions?.filter((c) => c.type !== 'Ready');
    assert.deepEqual(others(status), others(before));
  });

  test('a 403 names the permission when the API message does', () => {
    const message = failureMessage(
      failure('forbidden', 'createCronJob', {
        permission: { verb: 'create', resource: 'cronjobs', group: 'batch', namespace: 'ops' },
      }),
    );
    assert.equal(message, 'the operator may not create cronjobs.batch in namespace ops');
    assert.match(
      failureMessage(failure('forbidden')),
      /creating CronJob .* failed with 403 Forbidden: cronjobs\.batch is forbidden$/,
    );
  });

  test('no answer at all (timeout, connection refused) says so instead of a code', () => {
    const message = failureMessage(
      failure('transient', 'createCronJob', {
        code: undefined,
        apiReason: 'TimeoutError',
        message: 'The operation was aborted due to timeout',
      }),
    );
    assert.equal(
      message,
      'creating CronJob mysql-daily-backup failed: TimeoutError: The operation was aborted due to timeout',
    );
  });
});

describe('onFailure: one status write per change, never one per retry', () => {
  test('a persistent failure writes status once; every later retry writes only its Event', () => {
    let bj = reconciledThenEdited();
    let statusWrites = 0;
    let events = 0;
    for (let failures = 2; failures < 40; failures++) {
      const out = onFailure({
        backupJob: bj,
        failure: failure('transient'),
        failures,
        now: minutes(failures),
      });
      const status = statusOf(out.actions);
      if (status) {
        statusWrites++;
        bj = { ...bj, status };
      } else {
        assert.deepEqual(
          out.actions.map((a) => a.type),
          ['emitEvent'],
          `retry ${failures}`,
        );
      }
      events += out.actions.filter((a) => a.type === 'emitEvent').length;
    }
    assert.equal(statusWrites, 1);
    assert.equal(events, 38, 'the Event recorder folds these into one series');
  });

  test('a changed reason or message is written again; the transition time stays while Ready stays False', () => {
    const first = onFailure({
      backupJob: reconciledThenEdited(),
      failure: failure('transient'),
      failures: 2,
      now: minutes(1),
    });
    const bj = { ...reconciledThenEdited(), status: statusOf(first.actions) };
    const other = onFailure({
      backupJob: bj,
      failure: failure('forbidden'),
      failures: 3,
      now: minutes(2),
    });
    const ready = findCondition(statusOf(other.actions)?.conditions, 'Ready')!;
    assert.equal(ready.reason, 'Forbidden');
    assert.equal(ready.lastTransitionTime, minutes(1).toISOString());
  });

  test('when the failing write is the status patch, the Event alone says it', () => {
    for (const kind of ['transient', 'forbidden', 'invalid', 'conflict'] as const) {
      const out = onFailure({
        backupJob: reconciledThenEdited(),
        failure: failure(kind, 'updateStatus', { object: undefined }),
        failures: 20,
        now: T0,
      });
      assert.deepEqual(types(out.actions), [`event:${FAILURE_REASONS[kind]}`], kind);
      assert.match(event(out.actions)!.note, /^writing status failed|^the operator may not/);
      assert.equal(event(out.actions)!.action, 'UpdateStatus');
    }
  });

  test('the next successful reconcile clears it: Ready=True and observedGeneration caught up', () => {
    const bj = reconciledThenEdited();
    const out = onFailure({
      backupJob: bj,
      failure: failure('transient'),
      failures: 2,
      now: minutes(1),
    });
    const failed = {
      backupJob: { ...bj, status: statusOf(out.actions) },
      cronJob: undefined,
      jobs: [],
      now: minutes(2),
      config,
    };
    let world = applyActions(failed, run(failed).actions);
    world = applyActions(world, run(world).actions);
    const ready = findCondition(world.backupJob?.status?.conditions, 'Ready')!;
    assert.equal(ready.status, 'True');
    assert.equal(ready.reason, 'CronJobReady');
    assert.equal(world.backupJob?.status?.observedGeneration, 2);
    assert.equal(world.backupJob?.status?.ready, true);
  });
});
