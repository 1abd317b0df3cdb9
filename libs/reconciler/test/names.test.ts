import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CRONJOB_NAME_MAX,
  JOB_NAME_MAX,
  childName,
  cleanupJobName,
  cronJobName,
  ownerLabelValue,
} from '../src/names.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('child names', () => {
  test('short names keep the BackupJob name readable', () => {
    assert.equal(cronJobName('mysql-daily'), 'mysql-daily-backup');
    assert.equal(cleanupJobName('mysql-daily', 2), 'mysql-daily-cleanup-2');
    assert.equal(ownerLabelValue('mysql-daily'), 'mysql-daily');
  });

  const long = `${'a'.repeat(40)}-${'b'.repeat(60)}.example-${'c'.repeat(100)}`;
  const sibling = `${long.slice(0, -1)}d`;
  const cases: [string, (name: string) => string, number][] = [
    ['CronJob', cronJobName, CRONJOB_NAME_MAX],
    ['cleanup Job', (n) => cleanupJobName(n, 12), JOB_NAME_MAX],
    ['owner label', ownerLabelValue, 63],
  ];
  for (const [what, name, max] of cases) {
    test(`a long name gives a valid, deterministic, distinct ${what} name within ${max}`, () => {
      const a = name(long);
      assert.ok(a.length <= max, `${a} is ${a.length} long`);
      assert.match(a, DNS_SUBDOMAIN);
      assert.equal(name(long), a);
      assert.notEqual(name(sibling), a);
    });
  }

  test('the suffix is never cut and no separator is doubled', () => {
    const name = childName(`${'x'.repeat(39)}-${'y'.repeat(30)}`, 'backup', 52);
    assert.ok(name.endsWith('-backup'));
    assert.doesNotMatch(name, /--|-\.|\.-/);
    assert.equal(name.length <= 52, true);
  });

  test('a name of exactly the limit is not hashed', () => {
    const name = 'n'.repeat(CRONJOB_NAME_MAX - '-backup'.length);
    assert.equal(cronJobName(name), `${name}-backup`);
  });
});
