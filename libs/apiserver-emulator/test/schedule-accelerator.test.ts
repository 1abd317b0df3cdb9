import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ScheduleAccelerator } from '../src/controllers/schedule-accelerator.js';
import type { Emulator, KubeObject } from '../src/index.js';
import { withEmulator } from './support.js';
import { eventually } from '#testing';

const NS = 'accel';

function cronJob(name: string, schedule: string, suspend = false): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: NS },
    spec: {
      schedule,
      suspend,
      jobTemplate: {
        spec: {
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'b', image: 'b' }] } },
        },
      },
    },
  };
}

const jobsOf = (emu: Emulator, name: string) =>
  emu.objects
    .list('batch/v1', 'Job', NS)
    .filter((j) => j.metadata.ownerReferences?.some((r) => r.name === name));

describe('schedule accelerator', () => {
  let emu: Emulator;
  let realNow = Date.UTC(2026, 0, 1, 12, 0, 30);
  let accel: ScheduleAccelerator;
  before(async () => {
    emu = await withEmulator({
      namespaces: [NS],
      controllers: { jobs: { outcome: 'succeed' }, cronJobs: { schedule: false } },
    });
    // 60×: a virtual minute per real second; ticks are driven by the test alone.
    accel = new ScheduleAccelerator(emu, {
      factor: 60,
      minIntervalMs: 0,
      tickMs: 3_600_000,
      now: () => realNow,
    });
  });
  after(async () => {
    accel.stop();
    await emu.stop();
  });

  test('a schedule that comes due on the fast clock runs its CronJob once, with real timestamps', async () => {
    emu.objects.create(cronJob('hourly', '0 * * * *'));
    emu.objects.create(cronJob('paused', '* * * * *', true));
    realNow += 20_000; // virtual 12:20:30: no hour boundary yet
    accel.tick();
    assert.equal(jobsOf(emu, 'hourly').length, 0);
    realNow += 60_000; // virtual 13:20:30: 13:00 came due
    accel.tick();
    const jobs = jobsOf(emu, 'hourly');
    assert.equal(jobs.length, 1);
    assert.equal(jobsOf(emu, 'paused').length, 0, 'a suspended CronJob never runs');
    await eventually(
      'the Job completed and the CronJob recorded it',
      () =>
        (
          emu.objects.get('batch/v1', 'CronJob', 'hourly', NS)?.status as {
            lastSuccessfulTime?: string;
          }
        )?.lastSuccessfulTime,
    );
    const created = Date.parse(jobs[0]!.metadata.creationTimestamp!);
    assert.ok(Math.abs(created - Date.now()) < 60_000, 'timestamps stay on the real clock');
  });

  test('several schedule times within one tick run the CronJob once', () => {
    emu.objects.create(cronJob('minutely', '* * * * *'));
    realNow += 10 * 60_000; // ten virtual hours
    accel.tick();
    assert.equal(jobsOf(emu, 'minutely').length, 1);
  });
});
