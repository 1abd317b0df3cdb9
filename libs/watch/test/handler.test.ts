import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LABEL_OWNER_NAME } from '#api';
import type { KubeObject, OwnerReference } from '#kube';
import { backupJobKeyOfCronJob, backupJobKeyOfJob, controllerOf } from '../src/handler.js';

const bjRef = (name: string, controller = true): OwnerReference => ({
  apiVersion: 'ops.example.com/v1alpha1',
  kind: 'BackupJob',
  name,
  uid: `uid-${name}`,
  controller,
});
const cronRef = (name: string): OwnerReference => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  name,
  uid: `uid-${name}`,
  controller: true,
});

function child(
  name: string,
  refs: OwnerReference[] = [],
  labels?: Record<string, string>,
): KubeObject {
  return {
    metadata: { name, namespace: 'ops', ownerReferences: refs, ...(labels ? { labels } : {}) },
  };
}

describe('CronJob → BackupJob key', () => {
  test('follows the controller ownerReference to the BackupJob', () => {
    assert.equal(
      backupJobKeyOfCronJob(child('mysql-daily', [bjRef('mysql-daily')])),
      'ops/mysql-daily',
    );
  });

  test('ignores non-controller references and other kinds or groups', () => {
    assert.equal(backupJobKeyOfCronJob(child('a', [bjRef('a', false)])), undefined);
    assert.equal(
      backupJobKeyOfCronJob(child('a', [{ ...bjRef('a'), apiVersion: 'other.example.com/v1' }])),
      undefined,
    );
    assert.equal(backupJobKeyOfCronJob(child('a')), undefined);
  });

  test('controllerOf picks the controller among several references', () => {
    const refs = [bjRef('x', false), cronRef('y')];
    assert.equal(controllerOf(child('a', refs))?.name, 'y');
  });
});

describe('Job → BackupJob key', () => {
  test('uses the owner label first', () => {
    const job = child('mysql-daily-29000000', [cronRef('mysql-daily')], {
      [LABEL_OWNER_NAME]: 'mysql-daily',
    });
    assert.equal(backupJobKeyOfJob(job), 'ops/mysql-daily');
  });

  test('maps a cleanup Job controlled by the BackupJob', () => {
    assert.equal(
      backupJobKeyOfJob(child('mysql-daily-cleanup', [bjRef('mysql-daily')])),
      'ops/mysql-daily',
    );
  });

  test("follows an unlabelled Job through its CronJob's owner", () => {
    const cronJobs = new Map([['ops/nightly', child('nightly', [bjRef('pg-nightly')])]]);
    const lookup = (ns: string, name: string) => cronJobs.get(`${ns}/${name}`);
    assert.equal(
      backupJobKeyOfJob(child('nightly-1', [cronRef('nightly')]), lookup),
      'ops/pg-nightly',
    );
    assert.equal(backupJobKeyOfJob(child('other-1', [cronRef('other')]), lookup), undefined);
  });

  test('maps nothing for a Job nobody of ours controls', () => {
    assert.equal(backupJobKeyOfJob(child('x')), undefined);
  });
});
