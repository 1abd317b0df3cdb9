import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '#kube';
import { JsonText } from '../src/json-text.js';
import { stripCronJob, withoutWriters } from '../src/transform.js';

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
  test('a CronJob’s spec is cached as text and serializes as the server sent it', () => {
    const cached = stripCronJob(structuredClone(cronJob));
    assert.ok((cached as unknown as { spec: unknown }).spec instanceof JsonText);
    const stored = JSON.parse(JSON.stringify(withoutWriters(cached))) as Record<string, unknown>;
    assert.deepEqual(stored, {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly-backup', namespace: 'ops', resourceVersion: '7' },
      spec,
      status: { lastScheduleTime: '2026-12-06T02:10:00Z' },
    });
  });

  test('a CronJob without a spec stays without one', () => {
    const { spec: _spec, ...bare } = cronJob as unknown as Record<string, unknown>;
    const stored = JSON.parse(JSON.stringify(stripCronJob(bare as unknown as KubeObject)));
    assert.equal('spec' in stored, false);
  });
});
