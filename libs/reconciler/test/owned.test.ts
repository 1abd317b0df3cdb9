import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1CronJob } from '@kubernetes/client-node';
import { desiredCronJob } from '../src/desired.js';
import { ownedFieldDiff, ownedFieldsPatch } from '../src/owned.js';
import { parseQuantity, semanticallyEqual } from '../src/semantic.js';
import { effectiveSpec } from '../src/spec.js';
import { backupJob, config, mergePatch, storedCronJobFor } from './support.js';

function patched(desired: V1CronJob, actual: V1CronJob): V1CronJob {
  return mergePatch(actual, ownedFieldsPatch(desired, actual)) as V1CronJob;
}

describe('semanticallyEqual', () => {
  const cases: [string, unknown, unknown, string, boolean][] = [
    ['server-defaulted keys are ignored', { a: 1 }, { a: 1, b: 2 }, '', true],
    ['a changed value differs', { a: 1 }, { a: 2 }, '', false],
    ['false equals absent (omitempty)', { readOnly: false }, {}, '', true],
    ['0 equals absent', { n: 0 }, {}, '', true],
    ['"" equals absent', { s: '' }, {}, '', true],
    ['[] equals absent', { l: [] }, {}, '', true],
    ['unset desired means absent', undefined, 'Europe/Berlin', '', false],
    ['unset desired matches absent', undefined, undefined, '', true],
    [
      'unset desired does not match an explicit 0',
      { runAsUser: undefined },
      { runAsUser: 0 },
      '',
      false,
    ],
    ['lists compare by position and length', [{ a: 1 }], [{ a: 1 }, { a: 2 }], '', false],
    ['list items ignore defaulted keys', [{ a: 1 }], [{ a: 1, z: 0 }], '', true],
    ['cpu 1 = 1000m', '1', '1000m', '.resources.limits.cpu', true],
    ['cpu 0.5 = 500m', '0.5', '500m', '.resources.requests.cpu', true],
    ['memory 128Mi = 134217728', '128Mi', '134217728', '.resources.limits.memory', true],
    ['memory 128Mi != 128M', '128Mi', '128M', '.resources.limits.memory', false],
    ['quantities only under resources', '1', '1000m', '.spec.other', false],
  ];
  for (const [name, desired, actual, path, equal] of cases) {
    test(name, () => assert.equal(semanticallyEqual(desired, actual, path), equal));
  }

  test('parseQuantity', () => {
    assert.equal(parseQuantity('1Gi'), 2 ** 30);
    assert.equal(parseQuantity('1e3'), 1000);
    assert.equal(parseQuantity('250m'), 0.25);
    assert.equal(parseQuantity('nonsense'), undefined);
  });
});

describe('owned CronJob fields', () => {
  const bj = backupJob();
  const desired = desiredCronJob(bj, effectiveSpec(bj, config), config);

  test('a CronJob as the API server returns it (defaults, canonical quantities) has no diff', () => {
    assert.deepEqual(ownedFieldDiff(desired, storedCronJobFor(bj)), []);
  });

  const edits: [string, (cj: ReturnType<typeof storedCronJobFor>) => void, string][] = [
    ['schedule', (cj) => (cj.spec!.schedule = '0 0 * * *'), 'spec.schedule'],
    ['suspend', (cj) => (cj.spec!.suspend = true), 'spec.suspend'],
    ['time zone added', (cj) => (cj.spec!.timeZone = 'Europe/Berlin'), 'spec.timeZone'],
    ['concurrency', (cj) => (cj.spec!.concurrencyPolicy = 'Allow'), 'spec.concurrencyPolicy'],
    [
      'image',
      (cj) => (cj.spec!.jobTemplate.spec!.template.spec!.containers[0]!.image = 'evil:latest'),
      'spec.jobTemplate.spec.template.spec.containers',
    ],
    [
      'privilege escalation',
      (cj) => {
        cj.spec!.jobTemplate.spec!.template.spec!.containers[0]!.securityContext!.allowPrivilegeEscalation = true;
      },
      'spec.jobTemplate.spec.template.spec.containers',
    ],
    [
      'owner label removed',
      (cj) => delete cj.metadata!.labels!['backup.ops.example.com/backupjob'],
      'metadata.labels',
    ],
    [
      'extra volume',
      (cj) => cj.spec!.jobTemplate.spec!.template.spec!.volumes!.push({ name: 'x', emptyDir: {} }),
      'spec.jobTemplate.spec.template.spec.volumes',
    ],
    [
      'pod user set by someone else (the operator leaves it to the image)',
      (cj) => (cj.spec!.jobTemplate.spec!.template.spec!.securityContext!.runAsUser = 0),
      'spec.jobTemplate.spec.template.spec.securityContext',
    ],
    [
      'backoffLimit',
      (cj) => (cj.spec!.jobTemplate.spec!.backoffLimit = 9),
      'spec.jobTemplate.spec.backoffLimit',
    ],
  ];
  for (const [name, edit, path] of edits) {
    test(`an edit of ${name} is found and the owned-fields patch restores it`, () => {
      const actual = storedCronJobFor(bj);
      edit(actual);
      assert.deepEqual(ownedFieldDiff(desired, actual), [path]);
      const patch = ownedFieldsPatch(desired, actual);
      assert.deepEqual(
        patch['metadata'] && (patch['metadata'] as { resourceVersion?: string }).resourceVersion,
        actual.metadata?.resourceVersion,
      );
      assert.deepEqual(ownedFieldDiff(desired, patched(desired, actual)), []);
    });
  }

  test('the patch names only the differing owned fields', () => {
    const actual = storedCronJobFor(bj);
    actual.spec!.schedule = '1 1 * * *';
    assert.deepEqual(ownedFieldsPatch(desired, actual), {
      metadata: { resourceVersion: actual.metadata?.resourceVersion },
      spec: { schedule: '10 2 * * *' },
    });
  });

  test('fields and labels others own survive a restore', () => {
    const actual = storedCronJobFor(bj);
    actual.metadata!.labels!['team'] = 'dba';
    actual.metadata!.annotations = { ...actual.metadata!.annotations, note: 'kept' };
    actual.spec!.jobTemplate.spec!.template.spec!.tolerations = [
      { key: 'dedicated', operator: 'Exists' },
    ];
    actual.spec!.schedule = '1 1 * * *';
    const restored = patched(desired, actual);
    assert.equal(restored.spec?.schedule, '10 2 * * *');
    assert.equal(restored.metadata?.labels?.['team'], 'dba');
    assert.equal(restored.metadata?.annotations?.['note'], 'kept');
    assert.deepEqual(restored.spec?.jobTemplate.spec?.template.spec?.tolerations, [
      { key: 'dedicated', operator: 'Exists' },
    ]);
    assert.equal(restored.spec?.jobTemplate.spec?.template.spec?.dnsPolicy, 'ClusterFirst');
  });

  test('removing spec.timeZone removes it from the CronJob', () => {
    const zoned = backupJob({ spec: { timeZone: 'Europe/Berlin' } });
    const actual = storedCronJobFor(zoned);
    assert.deepEqual(ownedFieldDiff(desired, actual), ['spec.timeZone']);
    const patch = ownedFieldsPatch(desired, actual) as { spec: { timeZone: unknown } };
    assert.equal(patch.spec.timeZone, null, 'a merge patch removes with null');
    assert.equal(patched(desired, actual).spec?.timeZone, undefined);
  });
});
