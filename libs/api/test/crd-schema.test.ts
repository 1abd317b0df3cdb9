import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { crdValidator } from './crd-validator.js';

const crdPath = 'config/crd/bases/ops.example.com_backupjobs.yaml';
const validate = crdValidator(crdPath);
/** The BackupJob document of the sample (the file also creates its namespace). */
const sample = () =>
  parseAllDocuments(readFileSync('config/samples/ops_v1alpha1_backupjob.yaml', 'utf8'))
    .map((d) => d.toJS() as ReturnType<typeof parse>)
    .find((d) => d?.kind === 'BackupJob') as ReturnType<typeof parse>;

function withSpec(change: (spec: Record<string, unknown>) => void) {
  const object = sample();
  change(object.spec);
  return object;
}

describe('generated BackupJob CRD', () => {
  test('the sample is valid and gets the documented defaults', () => {
    const object = sample();
    const result = validate(object);
    assert.deepEqual(result.errors, []);
    assert.equal(object.spec.retentionDays, 7);
    assert.equal(object.spec.suspend, false);
    assert.equal(object.spec.deletionPolicy, 'Retain');
  });

  test('the chart ships the same CRD as config/', () => {
    assert.equal(
      readFileSync('helm/backupjob-operator/crds/ops.example.com_backupjobs.yaml', 'utf8'),
      readFileSync(crdPath, 'utf8'),
    );
  });

  test('declares names, status subresource and printer columns', () => {
    const crd = parse(readFileSync(crdPath, 'utf8'));
    assert.equal(crd.spec.scope, 'Namespaced');
    assert.deepEqual(crd.spec.names.shortNames, ['bj']);
    assert.deepEqual(crd.spec.names.categories, ['all', 'backup']);
    const version = crd.spec.versions[0];
    assert.deepEqual(version.subresources, { status: {} });
    assert.deepEqual(
      version.additionalPrinterColumns.map(
        (c: { name: string; type: string }) => `${c.name}:${c.type}`,
      ),
      ['Target:string', 'Schedule:string', 'Ready:boolean', 'Last Backup:date', 'Age:date'],
    );
  });

  const rejected: [string, (spec: Record<string, unknown>) => void, string][] = [
    ['missing target', (s) => delete s.target, 'spec.target'],
    ['missing schedule', (s) => delete s.schedule, 'spec.schedule'],
    ['retentionDays 0', (s) => (s.retentionDays = 0), 'spec.retentionDays'],
    ['retentionDays 3651', (s) => (s.retentionDays = 3651), 'spec.retentionDays'],
    ['retentionDays not an integer', (s) => (s.retentionDays = 1.5), 'spec.retentionDays'],
    ['schedule "every day"', (s) => (s.schedule = 'every day'), 'spec.schedule'],
    ['schedule with six fields', (s) => (s.schedule = '0 10 2 * * *'), 'spec.schedule'],
    ['schedule with TZ prefix', (s) => (s.schedule = 'CRON_TZ=UTC 10 2 * * *'), 'spec.schedule'],
    ['unknown spec field', (s) => (s.retention = 7), 'spec.retention'],
    ['deletionPolicy not in the enum', (s) => (s.deletionPolicy = 'Purge'), 'spec.deletionPolicy'],
    ['storage without claimName', (s) => (s.storage = { path: 'x' }), 'spec.storage.claimName'],
    ['empty target', (s) => (s.target = ''), 'spec.target'],
  ];
  for (const [name, change, field] of rejected) {
    test(`rejects ${name}, naming ${field}`, () => {
      const result = validate(withSpec(change));
      assert.equal(result.valid, false);
      assert.ok(
        result.errors.some((e) => e.startsWith(`${field}:`)),
        `expected an error on ${field}, got ${JSON.stringify(result.errors)}`,
      );
    });
  }

  const accepted: [string, (spec: Record<string, unknown>) => void][] = [
    ['@hourly', (s) => (s.schedule = '@hourly')],
    ['ranges, steps and names', (s) => (s.schedule = '*/15 1-5 * JAN-JUN MON,FRI')],
    [
      'every optional field',
      (s) =>
        Object.assign(s, {
          suspend: true,
          timeZone: 'Europe/Berlin',
          image: 'registry.example.com/backup:1.2.3',
          secretRef: { name: 'mysql-credentials' },
          storage: { claimName: 'backups', path: 'ops/mysql' },
          deletionPolicy: 'Delete',
        }),
    ],
  ];
  for (const [name, change] of accepted) {
    test(`accepts ${name}`, () => {
      assert.deepEqual(validate(withSpec(change)).errors, []);
    });
  }
});
