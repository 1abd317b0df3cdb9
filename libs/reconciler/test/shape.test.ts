import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BackupJob } from '#api';
import { findCondition } from '../src/conditions.js';
import { soundStatus, specProblems } from '../src/shape.js';
import { T0, applyActions, backupJob, config, run, types } from './support.js';

describe('specProblems: what a looser CRD let through', () => {
  const cases: [string, unknown, RegExp][] = [
    ['no spec at all', undefined, /^spec: must be an object, not undefined$/],
    ['a string', 'daily', /^spec: must be an object, not string$/],
    ['missing fields', {}, /spec\.target: is required/],
    ['wrong types', { target: 1, schedule: ['x'] }, /spec\.target: must be a string, not integer/],
    ['out of range', { target: 'db', schedule: '@daily', retentionDays: 0 }, /at least 1/],
    ['a huge target', { target: 'x'.repeat(1 << 20), schedule: '@daily' }, /at most 253/],
    ['a bad enum', { target: 'db', schedule: '@daily', deletionPolicy: 'Shred' }, /Retain, Delete/],
    ['secretRef as a string', { target: 'db', schedule: '@daily', secretRef: 'db' }, /secretRef/],
  ];
  for (const [name, spec, expected] of cases) {
    test(name, () => assert.match(specProblems(spec).join('\n'), expected));
  }
  test('a sound spec has none', () => {
    assert.deepEqual(specProblems(backupJob().spec), []);
  });
});

test('soundStatus keeps what is sound and drops the rest', () => {
  const good = {
    type: 'Ready',
    status: 'True',
    reason: 'CronJobReady',
    message: 'ok',
    lastTransitionTime: '2026-05-29T00:00:00Z',
  };
  assert.deepEqual(
    soundStatus({
      ready: 'yes',
      observedGeneration: 2,
      lastBackupTime: 'yesterday',
      conditions: [good, 'Ready', { type: 3 }],
      extra: {},
    }),
    { observedGeneration: 2, conditions: [good] },
  );
  assert.deepEqual(soundStatus('broken'), {});
  assert.deepEqual(soundStatus({ conditions: 'none' }), {});
});

describe('reconcile: objects the CRD schema would have rejected', () => {
  const malformed = (spec: unknown, status?: unknown) =>
    ({ ...backupJob(), spec, status }) as unknown as BackupJob;

  test('a malformed spec: Ready=False InvalidSpec naming the fields, no CronJob, terminal', () => {
    const input = {
      backupJob: malformed({ target: 7 }),
      cronJob: undefined,
      jobs: [],
      now: T0,
      config,
    };
    const out = run(input);
    assert.deepEqual(types(out.actions), ['updateStatus', 'event:InvalidSpec']);
    assert.equal(out.result.kind, 'terminal');
    const ready = findCondition(
      applyActions(input, out.actions).backupJob?.status?.conditions,
      'Ready',
    );
    assert.match(
      ready?.message ?? '',
      /spec\.schedule: is required; spec\.target: must be a string/,
    );
  });

  test('a status of wrong types is written away, and then left alone', () => {
    const input = {
      backupJob: malformed(backupJob().spec, {
        conditions: 'x',
        ready: 'no',
        observedGeneration: 'one',
      }),
      cronJob: undefined,
      jobs: [],
      now: T0,
      config,
    };
    const out = run(input);
    const status = out.actions.find((a) => a.type === 'updateStatus');
    assert.ok(status?.type === 'updateStatus');
    assert.equal(status.status.ready, true);
    assert.equal(status.status.observedGeneration, 1);
    const next = applyActions(input, out.actions);
    assert.deepEqual(types(run({ ...next, cronJob: next.cronJob }).actions), []);
  });

  test('deleting with a malformed spec: the finalizer goes, the backups stay', () => {
    const bj = { ...malformed('x'), metadata: { ...backupJob().metadata, deletionTimestamp: T0 } };
    assert.deepEqual(types(run({ backupJob: bj as unknown as BackupJob }).actions), [
      'removeFinalizer',
    ]);
  });
});
