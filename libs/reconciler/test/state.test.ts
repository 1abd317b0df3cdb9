import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BackupJob, BackupJobStatus, Condition } from '#api';
import { backupJobState } from '../src/state.js';
import { T0, backupJob, config } from './support.js';

function cond(type: string, status: Condition['status']): Condition {
  return { type, status, reason: 'R', message: 'm', lastTransitionTime: T0.toISOString() };
}

function withStatus(status: BackupJobStatus, spec: Partial<BackupJob['spec']> = {}): BackupJob {
  return { ...backupJob({ spec }), status };
}

describe('backupJobState', () => {
  test('a BackupJob never reconciled: not ready, result unknown, not overdue, next run known', () => {
    const state = backupJobState(backupJob(), T0, config);
    assert.deepEqual(state, {
      namespace: 'ops',
      name: 'mysql-daily',
      ready: false,
      lastSuccessfulBackup: undefined,
      lastBackupResult: 'unknown',
      overdue: false,
      // "10 2 * * *" in UTC, the first after 2026-05-29T00:00Z.
      nextScheduledRun: new Date('2026-05-29T02:10:00Z'),
    });
  });

  const rows: {
    what: string;
    status: BackupJobStatus;
    expect: Partial<ReturnType<typeof backupJobState>>;
  }[] = [
    {
      what: 'ready, last backup succeeded',
      status: {
        lastBackupTime: '2026-05-28T02:10:30Z',
        conditions: [cond('Ready', 'True'), cond('BackupSucceeded', 'True')],
      },
      expect: {
        ready: true,
        lastSuccessfulBackup: new Date('2026-05-28T02:10:30Z'),
        lastBackupResult: 'succeeded',
      },
    },
    {
      what: 'the newest backup failed after an older success',
      status: {
        lastBackupTime: '2026-05-27T02:10:30Z',
        conditions: [cond('Ready', 'True'), cond('BackupSucceeded', 'False')],
      },
      expect: { ready: true, lastBackupResult: 'failed' },
    },
    {
      what: 'overdue',
      status: { conditions: [cond('Ready', 'True'), cond('BackupOverdue', 'True')] },
      expect: { overdue: true },
    },
    {
      what: 'a failing reconcile (Ready=False)',
      status: { conditions: [cond('Ready', 'False'), cond('BackupOverdue', 'False')] },
      expect: { ready: false, overdue: false },
    },
    {
      what: 'Ready=Unknown counts as not ready',
      status: { conditions: [cond('Ready', 'Unknown')] },
      expect: { ready: false },
    },
    {
      what: 'a malformed status is read as far as it is sound',
      status: { lastBackupTime: 42 as unknown as string, conditions: [cond('Ready', 'True')] },
      expect: { ready: true, lastSuccessfulBackup: undefined },
    },
  ];
  for (const row of rows) {
    test(row.what, () => {
      const state = backupJobState(withStatus(row.status), T0, config);
      for (const [key, value] of Object.entries(row.expect)) {
        assert.deepEqual(state[key as keyof typeof state], value, key);
      }
    });
  }

  test('the next run follows the time zone and @-macros as the CronJob does', () => {
    const tokyo = backupJobState(withStatus({}, { timeZone: 'Asia/Tokyo' }), T0, config);
    // 02:10 in Tokyo is 17:10 UTC the day before: the next one after T0 is 2026-05-29T17:10Z.
    assert.deepEqual(tokyo.nextScheduledRun, new Date('2026-05-29T17:10:00Z'));
    const weekly = backupJobState(withStatus({}, { schedule: '@weekly' }), T0, config);
    assert.deepEqual(weekly.nextScheduledRun, new Date('2026-05-31T00:00:00Z'));
  });

  test('no next run when suspended, when the schedule is invalid or the spec malformed', () => {
    for (const spec of [
      { suspend: true },
      { schedule: '0 0 L * *' },
      { timeZone: 'Mars/Olympus' },
      { schedule: 7 as unknown as string },
    ]) {
      assert.equal(backupJobState(withStatus({}, spec), T0, config).nextScheduledRun, undefined);
    }
  });
});
