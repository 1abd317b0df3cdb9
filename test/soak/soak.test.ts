import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, RequestRecord } from '#apiserver-emulator';
import {
  checkConverged,
  checkNoLostUpdate,
  checkNoOrphans,
  checkNoOverlap,
  checkWritesGuarded,
  type ClusterView,
} from './invariants.js';
import { parseSoakArgs } from './options.js';
import { Rng } from './rng.js';
import { type ReconcileRun } from '#testing';

const spec = { schedule: '0 3 * * *', suspend: false, timeZone: null };

function backupJob(name: string, overrides: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'ops.example.com/v1alpha1',
    kind: 'BackupJob',
    metadata: { name, uid: `uid-${name}`, generation: 2 },
    spec,
    status: { observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True' }] },
    ...overrides,
  } as KubeObject;
}

function cronJob(
  owner: string,
  fields: Record<string, unknown> = spec,
  uid = `uid-${owner}`,
): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: {
      name: `${owner}-backup`,
      ownerReferences: [
        {
          apiVersion: 'ops.example.com/v1alpha1',
          kind: 'BackupJob',
          name: owner,
          uid,
          controller: true,
        },
      ],
    },
    spec: fields,
  } as KubeObject;
}

describe('soak invariants: each finds what it names and passes a right world', () => {
  test('converged: a right world passes; a stale CronJob, an unobserved generation and a deleted survivor each fail', () => {
    const right: ClusterView = { backupJobs: [backupJob('a')], cronJobs: [cronJob('a')] };
    assert.deepEqual(checkConverged(right, []), []);
    const stale: ClusterView = {
      backupJobs: [backupJob('a'), backupJob('b', { status: { observedGeneration: 1 } })],
      cronJobs: [cronJob('a', { ...spec, schedule: '@weekly' }), cronJob('b')],
    };
    assert.deepEqual(
      checkConverged(stale, []).map((v) => `${v.object}: ${v.message}`),
      [
        'a: CronJob schedule @weekly ≠ 0 3 * * *',
        'b: observedGeneration 1 ≠ generation 2',
        'b: Ready is missing',
      ],
    );
    assert.deepEqual(
      checkConverged(right, ['a']).map((v) => v.message),
      ['deleted, but still there'],
    );
  });

  test('no orphan: a CronJob whose owner uid is gone (deleted and made again) is found', () => {
    const view: ClusterView = {
      backupJobs: [backupJob('a')],
      cronJobs: [cronJob('a'), cronJob('a', spec, 'uid-old')],
    };
    assert.deepEqual(
      checkNoOrphans(view).map((v) => v.message),
      ['its owner a (uid uid-old) is gone'],
    );
  });

  test('no lost update: a change after the last run started is found', () => {
    const starts = new Map([
      ['ns/a', 2000],
      ['ns/b', 500],
    ]);
    const changed = () => 1000;
    assert.deepEqual(
      checkNoLostUpdate(['a', 'b'], changed, starts, 'ns').map((v) => v.object),
      ['b'],
    );
  });

  test('one run at a time: overlapping runs of a key on two workers are found, touching ones are not', () => {
    const run = (worker: string, start: number, end: number): ReconcileRun => ({
      key: 'ns/a',
      reconcileID: `${worker}-${start}`,
      worker,
      start,
      end,
      ended: true,
    });
    assert.deepEqual(checkNoOverlap([run('w0', 0, 10), run('w1', 10, 20)]), []);
    assert.equal(checkNoOverlap([run('w0', 0, 10), run('w1', 5, 20)]).length, 1);
  });

  test('every write guarded: an operator write without a precondition is found; others are not', () => {
    const record = (over: Partial<RequestRecord>): RequestRecord =>
      ({
        verb: 'patch',
        resource: 'cronjobs',
        subresource: '',
        name: 'a-backup',
        user: 'op',
        code: 200,
        time: 0,
        precondition: 'resourceVersion',
        ...over,
      }) as RequestRecord;
    const records = [
      record({}),
      record({ verb: 'delete', precondition: 'uid' }),
      record({ precondition: 'none' }),
      record({ resource: 'events', precondition: 'none' }),
      record({ user: 'kubectl', precondition: 'none' }),
      record({ verb: 'create', precondition: undefined }),
    ];
    assert.deepEqual(
      checkWritesGuarded(records, 'op').map((v) => v.message),
      ['patch cronjobs a-backup at 1970-01-01T00:00:00.000Z (answered 200) carried none'],
    );
  });
});

describe('soak: seed and options', () => {
  test('the same seed gives the same choices; another seed others', () => {
    const draw = (seed: number) => {
      const rng = new Rng(seed);
      return Array.from({ length: 8 }, () => rng.int(1000));
    };
    assert.deepEqual(draw(17), draw(17));
    assert.notDeepEqual(draw(17), draw(18));
  });

  test('flags are parsed; a bad one is refused with its name', () => {
    const options = parseSoakArgs(
      ['--duration', '90s', '--seed', '17', '--faults', 'kill-worker,redis-restart'],
      () => 5,
    );
    assert.deepEqual(
      [options.durationMs, options.seed, options.faults],
      [90_000, 17, ['kill-worker', 'redis-restart']],
    );
    assert.equal(parseSoakArgs([], () => 5).seed, 5);
    assert.throws(() => parseSoakArgs(['--workers', '0'], () => 5), /--workers must be an integer/);
    assert.throws(
      () => parseSoakArgs(['--duration', 'soon'], () => 5),
      /--duration must be a duration/,
    );
  });
});
