import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { cronJobName } from '#reconciler';
import {
  NAMESPACE,
  config,
  converge,
  createBackupJob,
  getBackupJob,
  getCronJob,
  sample,
  startHarness,
  type Harness,
} from './support.js';
import { condition, eventually } from '#testing';

const START = Date.parse('2026-05-29T02:00:00Z');
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const GRACE = (config.startingDeadlineSeconds + config.activeDeadlineSeconds) * 1000;

/**
 * The whole loop with the emulator's CronJob and Job controllers on a manual clock: the CronJob
 * the operator made starts Jobs from its template, and the reconciler finds them by label.
 */
describe('backup runs started by the CronJob (emulator simulation, manual clock)', () => {
  let h: Harness;
  const key = `${NAMESPACE}/nightly`;
  before(async () => {
    h = await startHarness({
      emulator: {
        clock: { mode: 'manual', start: START },
        controllers: { cronJobs: true, jobs: { outcome: 'manual' } },
      },
    });
    createBackupJob(h, sample('nightly'));
    await converge(h, key);
  });
  after(() => h.stop());

  const jobs = () => h.emu.objects.list('batch/v1', 'Job', NAMESPACE) as unknown as V1Job[];

  async function scheduledRun(at: number, outcome: 'succeed' | 'fail'): Promise<V1Job> {
    const before = jobs().length;
    h.emu.core.clock.set(at);
    await eventually('the CronJob to start a Job', () => jobs().length > before);
    const started = jobs().at(-1) as V1Job;
    await eventually('the Job to start', () =>
      Boolean(h.emu.objects.get('batch/v1', 'Job', started.metadata!.name!, NAMESPACE)?.status),
    );
    h.emu.controllers.jobs!.finish(NAMESPACE, started.metadata!.name!, outcome);
    return started;
  }

  test('the Job the CronJob starts carries the labels, env and security of the template', async () => {
    const job = await scheduledRun(START + 10 * MINUTE, 'succeed');
    assert.equal(job.metadata?.labels?.['backup.ops.example.com/backupjob'], 'nightly');
    assert.equal(job.metadata?.ownerReferences?.[0]?.name, cronJobName('nightly'));
    const container = job.spec?.template.spec?.containers[0];
    assert.equal(container?.env?.find((e) => e.name === 'BACKUP_TARGET')?.value, 'mysql');
    assert.equal(container?.securityContext?.readOnlyRootFilesystem, true);
  });

  test('its success sets lastBackupTime and lastScheduleTime', async () => {
    h.emu.core.clock.set(START + 12 * MINUTE);
    const result = await converge(h, key);
    const stored = getBackupJob(h, 'nightly');
    assert.equal(stored?.status?.lastBackupTime, new Date(START + 10 * MINUTE).toISOString());
    assert.equal(stored?.status?.lastScheduleTime, new Date(START + 10 * MINUTE).toISOString());
    assert.equal(condition(stored, 'BackupSucceeded')?.status, 'True');
    assert.equal(
      getCronJob(h, cronJobName('nightly'))?.status?.lastScheduleTime !== undefined,
      true,
    );
    // Looked at again when tonight's run is due (scheduled time + grace).
    const due = START + 10 * MINUTE + GRACE;
    assert.deepEqual(result, { requeueAfter: due - (START + 12 * MINUTE) });
  });

  test('the next night fails: BackupSucceeded=False with the reason; past the grace it is overdue', async () => {
    await scheduledRun(START + DAY + 10 * MINUTE, 'fail');
    h.emu.core.clock.set(START + DAY + 15 * MINUTE);
    await converge(h, key);
    let stored = getBackupJob(h, 'nightly');
    assert.equal(condition(stored, 'BackupSucceeded')?.status, 'False');
    assert.equal(condition(stored, 'BackupSucceeded')?.reason, 'BackoffLimitExceeded');
    assert.notEqual(condition(stored, 'BackupOverdue')?.status, 'True', 'still within the grace');

    h.emu.core.clock.set(START + DAY + 10 * MINUTE + GRACE + MINUTE);
    await converge(h, key);
    stored = getBackupJob(h, 'nightly');
    assert.equal(condition(stored, 'BackupOverdue')?.status, 'True');
    assert.equal(condition(stored, 'BackupOverdue')?.reason, 'MissedSchedule');
    assert.equal(stored?.status?.ready, true, 'overdue is not a reason to call the CronJob broken');
  });

  test('suspending stops the runs and the overdue alarm', async () => {
    h.emu.objects.patch('ops.example.com/v1alpha1', 'BackupJob', 'nightly', NAMESPACE, {
      spec: { suspend: true },
    });
    assert.equal(await converge(h, key), undefined, 'nothing to wait for while suspended');
    assert.equal(getCronJob(h, cronJobName('nightly'))?.spec?.suspend, true);
    const before = jobs().length;
    h.emu.core.clock.set(START + 2 * DAY + 10 * MINUTE + GRACE);
    await converge(h, key);
    assert.equal(jobs().length, before, 'a suspended CronJob starts nothing');
    assert.equal(condition(getBackupJob(h, 'nightly'), 'BackupOverdue')?.reason, 'Suspended');
  });
});
