import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '#kube';
import { Interner } from '../src/intern.js';
import { JsonPacker, PackedJson } from '../src/packed-json.js';
import { stripBackupJob, stripCronJob, withoutWriters } from '../src/transform.js';

const spec = {
  schedule: '10 2 * * *',
  suspend: false,
  jobTemplate: {
    spec: {
      backoffLimit: 2,
      template: { spec: { containers: [{ name: 'backup', image: 'backup:1', env: [] }] } },
    },
  },
};

const cronJob: KubeObject = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: {
    name: 'nightly-backup',
    namespace: 'ops',
    resourceVersion: '7',
    managedFields: [
      { manager: 'backupjob-operator', operation: 'Update', fieldsV1: { 'f:spec': {} } },
    ],
  },
  spec,
  status: { lastScheduleTime: '2026-12-06T02:10:00Z', active: [{ name: 'nightly-backup-1' }] },
} as unknown as KubeObject;

describe('cache transforms', () => {
  test('a CronJob’s spec is cached packed and serializes as the server sent it', () => {
    const cached = stripCronJob(structuredClone(cronJob));
    assert.ok((cached as unknown as { spec: unknown }).spec instanceof PackedJson);
    const stored = JSON.parse(JSON.stringify(withoutWriters(cached))) as Record<string, unknown>;
    assert.deepEqual(stored, {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly-backup', namespace: 'ops', resourceVersion: '7' },
      spec,
      status: { lastScheduleTime: '2026-12-06T02:10:00Z' },
    });
  });

  test('a BackupJob’s spec and status serialize as the server sent them, odd conditions too', () => {
    const status = {
      ready: true,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'CronJobReady',
          message: 'ok',
          observedGeneration: 2,
        },
        { type: 'BackupSucceeded', status: 'Unknown' },
        null,
        'not a condition',
      ],
    };
    const backupJob = {
      apiVersion: 'ops.example.com/v1alpha1',
      kind: 'BackupJob',
      metadata: { name: 'nightly', namespace: 'ops' },
      spec: { target: 'db', schedule: '10 2 * * *', retentionDays: 7 },
      status,
    } as unknown as KubeObject;
    const stored = JSON.parse(JSON.stringify(withoutWriters(stripBackupJob(backupJob))));
    assert.deepEqual(stored, backupJob);
  });

  test('a CronJob without a spec stays without one', () => {
    const { spec: _spec, ...bare } = cronJob as unknown as Record<string, unknown>;
    const stored = JSON.parse(JSON.stringify(stripCronJob(bare as unknown as KubeObject)));
    assert.equal('spec' in stored, false);
  });
});

describe('JsonPacker', () => {
  test('every value unpacks to what was packed, alike or not, any characters', () => {
    const packer = new JsonPacker();
    const values = [
      spec,
      { ...spec, schedule: '0 * * * *' },
      { other: [1, 'two', null] },
      'text',
      { note: 'sauvegarde ✓ 備份' },
    ];
    const packed = values.map((value) => packer.pack(value));
    assert.deepEqual(
      packed.map((p) => packer.unpack(p)),
      values,
    );
  });

  test('a value alike the first packs into a fraction of its text', () => {
    const packer = new JsonPacker();
    packer.pack(spec);
    const alike = { ...spec, schedule: '20 3 * * *' };
    assert.ok(packer.pack(alike).length * 4 < JSON.stringify(alike).length);
  });
});

describe('Interner', () => {
  test('gives back every value as it was and keeps at most its limit of distinct ones', () => {
    const interner = new Interner(3);
    const values = ['manager-0', 'manager-1', 'manager-0', 'manager-2', 'manager-3', 'manager-4'];
    assert.deepEqual(
      values.map((value) => interner.intern(value)),
      values,
    );
    assert.equal(interner.intern(undefined), undefined);
    assert.equal(interner.size, 3);
  });
});
