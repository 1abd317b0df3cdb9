import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { stringify } from 'yaml';
import { cronJobName } from '#reconciler';
import {
  eventually,
  type ManagedProcess,
  type OperatorSystem,
  startOperatorSystem,
} from '#testing';
import { waitForLeader } from '../faults/support/system.js';
import {
  backupJobManifest,
  capture,
  expectOk,
  getBackupJob,
  isConverged,
  metricLines,
  metricValue,
  scrapeMetrics,
} from './support.js';

// The per-BackupJob metrics as Prometheus scrapes them from the running watchers: the leader
// exports them from its informer cache, computed at scrape time; a standby exports none.

const FAMILIES = [
  'backupjob_ready',
  'backupjob_last_successful_backup_timestamp_seconds',
  'backupjob_last_backup_result',
  'backupjob_backup_overdue',
  'backupjob_next_scheduled_run_timestamp_seconds',
];

let sys: OperatorSystem;
let leader: ManagedProcess;
let standby: ManagedProcess;

before(async () => {
  sys = await startOperatorSystem({
    watchers: 2,
    workers: 1,
    emulator: { namespaces: ['ops'], controllers: { jobs: true, cronJobs: { schedule: false } } },
  });
  leader = await waitForLeader(sys);
  standby = sys.watchers.find((w) => w !== leader)!;
});

after(async () => {
  await sys?.stop();
});

const labels = (name: string) => ({ namespace: 'ops', name });

/** The next 02:10 UTC after `now`: "10 2 * * *" read in the default time zone. */
function nextTenPastTwo(now: Date): number {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 2, 10);
  return (today > now.getTime() ? today : today + 86_400_000) / 1000;
}

test('the leader exports each BackupJob: ready, last success, last result, overdue, next run', async () => {
  for (const [name, spec] of [
    ['daily', {}],
    ['paused', { suspend: true }],
  ] as const) {
    expectOk(
      await sys.kubectl(['apply', '-f', '-'], {
        input: stringify(backupJobManifest('ops', name, spec)),
      }),
      'apply',
    );
    await eventually(`${name} converged`, () => isConverged(sys, 'ops', name));
  }
  const job = sys.emulator.runCronJob('ops', cronJobName('daily'));
  sys.emulator.completeJob('ops', job.metadata.name!);
  const lastBackupTime = await eventually(
    'lastBackupTime in status',
    () => getBackupJob(sys, 'ops', 'daily')?.status?.lastBackupTime,
  );

  const text = await eventually('the leader to export the backup', async () => {
    const scraped = await scrapeMetrics(sys, leader);
    const at = metricValue(
      scraped,
      'backupjob_last_successful_backup_timestamp_seconds',
      labels('daily'),
    );
    return at > 0 && scraped;
  });
  capture(
    'backupjob metrics on the leader',
    FAMILIES.flatMap((family) => metricLines(text, family)).join('\n'),
  );
  assert.equal(metricValue(text, 'backupjob_ready', labels('daily')), 1);
  assert.equal(metricValue(text, 'backupjob_ready', labels('paused')), 1);
  assert.equal(
    metricValue(text, 'backupjob_last_successful_backup_timestamp_seconds', labels('daily')),
    Date.parse(lastBackupTime) / 1000,
  );
  const result = (name: string, r: string) =>
    metricValue(text, 'backupjob_last_backup_result', { ...labels(name), result: r });
  assert.deepEqual(
    ['succeeded', 'failed', 'unknown'].map((r) => result('daily', r)),
    [1, 0, 0],
  );
  assert.deepEqual(
    ['succeeded', 'failed', 'unknown'].map((r) => result('paused', r)),
    [0, 0, 1],
  );
  assert.equal(metricValue(text, 'backupjob_backup_overdue', labels('daily')), 0);
  const next = metricValue(text, 'backupjob_next_scheduled_run_timestamp_seconds', labels('daily'));
  assert.equal(next, nextTenPastTwo(new Date()));
  assert.deepEqual(
    metricLines(text, 'backupjob_next_scheduled_run_timestamp_seconds', labels('paused')),
    [],
    'a suspended BackupJob has no next run',
  );
  // Documented cardinality: at most 7 series per BackupJob.
  const series = FAMILIES.flatMap((f) => metricLines(text, f, labels('daily')));
  assert.equal(series.length, 7);
});

test('a standby exports no backupjob_* series', async () => {
  const text = await scrapeMetrics(sys, standby);
  for (const family of FAMILIES) assert.doesNotMatch(text, new RegExp(`^${family}\\b`, 'm'));
  assert.match(text, /^leader_election_master_status\{name="[^"]+"\} 0$/m);
});

test('a deleted BackupJob has no series at the next scrape', async () => {
  expectOk(await sys.kubectl(['delete', 'bj', 'paused', '-n', 'ops']), 'delete');
  await eventually('the deleted BackupJob to leave the metrics', async () => {
    const text = await scrapeMetrics(sys, leader);
    return (
      FAMILIES.every((f) => metricLines(text, f, labels('paused')).length === 0) &&
      metricLines(text, 'backupjob_ready', labels('daily')).length === 1
    );
  });
});
