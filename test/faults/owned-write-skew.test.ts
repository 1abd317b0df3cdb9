import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeObject } from '#apiserver-emulator';
import { cronJobName } from '#reconciler';
import {
  condition,
  eventually,
  type OperatorSystem,
  startOperatorSystem,
  untilWorking,
} from '#testing';
import { backupJobManifest, expectOk, getBackupJob, getCronJob, USERS } from '../e2e/support.js';
import { FAULT_ENV } from './support/system.js';

const NS = 'skew';
const NIGHTLY = '0 3 * * *';
const WEEKLY = '@weekly';

interface CronJobSpec {
  schedule?: string;
  suspend?: boolean;
}

/**
 * Runs that pair a fresh BackupJob with a CronJob copy older than the operator's own last write
 * must not leave the CronJob wrong: when the CronJob watch catches up, the operator's own write
 * reaches the snapshot and the owner is reconciled once more (controller-runtime's Owns()).
 * Each scenario changes things while the watcher's CronJob list and watch answer 429, so the
 * snapshots keep the CronJob as it was before the storm, then ends the storm.
 */
describe(
  'a lagging CronJob watch and the operator’s own CronJob writes',
  { timeout: 300_000 },
  () => {
    let sys: OperatorSystem;
    before(async () => {
      sys = await startOperatorSystem({
        watchers: 1,
        workers: 1,
        env: FAULT_ENV,
        emulator: { namespaces: [NS] },
      });
      await untilWorking(sys);
    });
    after(() => sys?.stop());

    const cronJobSpec = (name: string) =>
      getCronJob(sys, NS, name)?.spec as CronJobSpec | undefined;
    const observed = (name: string) => () => {
      const bj = getBackupJob(sys, NS, name);
      return (
        bj !== undefined &&
        bj.status?.observedGeneration === bj.metadata.generation &&
        condition(bj, 'Ready')?.status === 'True'
      );
    };
    const kubectl = async (what: string, args: string[]) =>
      expectOk(await sys.kubectl([...args, '-n', NS]), what);
    const setSchedule = (name: string, schedule: string) =>
      kubectl(`kubectl patch schedule ${schedule}`, [
        'patch',
        'backupjob',
        name,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { schedule } }),
      ]);

    /** A Ready BackupJob on `schedule`, its CronJob on it too. */
    async function readyOn(name: string, schedule: string): Promise<void> {
      expectOk(
        await sys.kubectl(['apply', '-f', '-'], {
          input: JSON.stringify(backupJobManifest(NS, name, { schedule })),
        }),
        'kubectl apply',
      );
      await eventually(`${name} to be Ready`, observed(name));
      await eventually(
        `${name}'s CronJob on ${schedule}`,
        () => cronJobSpec(name)?.schedule === schedule,
      );
    }

    /** Runs `steps` while the watcher's CronJob list and watch fail, then ends the storm. */
    async function duringCronJobOutage(steps: () => Promise<void>): Promise<void> {
      const storm = sys.emulator.faults.addError({
        match: { user: USERS.watcher, resource: 'cronjobs', verb: ['list', 'watch'] },
        code: 429,
        retryAfterSeconds: 1,
      });
      const dropped = sys.emulator.watches.drop({ user: USERS.watcher, resource: 'cronjobs' });
      assert.equal(dropped, 1, 'the watcher’s CronJob watch was dropped');
      try {
        await steps();
      } finally {
        sys.emulator.faults.remove(storm);
      }
    }

    /** The CronJob carries the latest spec and the BackupJob says so, once the watch caught up. */
    async function convergedOn(name: string, schedule: string): Promise<void> {
      await eventually(
        `${name}'s CronJob on ${schedule}, not suspended, once the CronJob watch caught up`,
        () => {
          const spec = cronJobSpec(name);
          return spec?.schedule === schedule && (spec.suspend ?? false) === false;
        },
        60_000,
      );
      await eventually(`${name} Ready at its latest generation`, observed(name));
    }

    test('B, then back to A: the CronJob ends at A', async () => {
      await readyOn('b-a', NIGHTLY);
      await duringCronJobOutage(async () => {
        await setSchedule('b-a', WEEKLY);
        await eventually(
          'the CronJob patched to @weekly',
          () => cronJobSpec('b-a')?.schedule === WEEKLY,
        );
        await eventually('observedGeneration to follow @weekly', observed('b-a'));
        // The snapshot still holds the nightly copy, so this run finds the CronJob "already right".
        await setSchedule('b-a', NIGHTLY);
        await eventually('observedGeneration to follow the nightly schedule', observed('b-a'));
      });
      await convergedOn('b-a', NIGHTLY);
    });

    test('A, B, A, B: the CronJob ends at B', async () => {
      await readyOn('abab', NIGHTLY);
      await duringCronJobOutage(async () => {
        await setSchedule('abab', WEEKLY);
        await eventually(
          'the CronJob patched to @weekly',
          () => cronJobSpec('abab')?.schedule === WEEKLY,
        );
        await setSchedule('abab', NIGHTLY);
        await eventually('observedGeneration to follow the nightly schedule', observed('abab'));
        // Decided from the nightly copy, the patch to @weekly carries that copy's resourceVersion
        // and is refused (409) until the snapshot catches up.
        await setSchedule('abab', WEEKLY);
      });
      await convergedOn('abab', WEEKLY);
    });

    test('B, the CronJob deleted by hand, back to A: the CronJob is made again at A', async () => {
      await readyOn('deleted', NIGHTLY);
      await duringCronJobOutage(async () => {
        await setSchedule('deleted', WEEKLY);
        await eventually(
          'the CronJob patched to @weekly',
          () => cronJobSpec('deleted')?.schedule === WEEKLY,
        );
        await kubectl('kubectl delete cronjob', ['delete', 'cronjob', cronJobName('deleted')]);
        await setSchedule('deleted', NIGHTLY);
        await eventually('observedGeneration to follow the nightly schedule', observed('deleted'));
      });
      await convergedOn('deleted', NIGHTLY);
    });

    test('B, the CronJob suspended by hand, back to A: the CronJob ends at A, not suspended', async () => {
      await readyOn('edited', NIGHTLY);
      await duringCronJobOutage(async () => {
        await setSchedule('edited', WEEKLY);
        await eventually(
          'the CronJob patched to @weekly',
          () => cronJobSpec('edited')?.schedule === WEEKLY,
        );
        await kubectl('kubectl patch cronjob', [
          'patch',
          'cronjob',
          cronJobName('edited'),
          '--type=merge',
          '-p',
          JSON.stringify({ spec: { suspend: true } }),
        ]);
        await setSchedule('edited', NIGHTLY);
        await eventually('observedGeneration to follow the nightly schedule', observed('edited'));
      });
      await convergedOn('edited', NIGHTLY);
    });
  },
);

/** A finished Job's status, as the Job controller writes it. */
function finished(state: 'succeeded' | 'failed', at: Date): Record<string, unknown> {
  const time = at.toISOString();
  const startTime = new Date(at.getTime() - 60_000).toISOString();
  return state === 'succeeded'
    ? {
        startTime,
        completionTime: time,
        succeeded: 1,
        conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: time }],
      }
    : {
        startTime,
        failed: 1,
        conditions: [
          {
            type: 'Failed',
            status: 'True',
            reason: 'BackoffLimitExceeded',
            lastTransitionTime: time,
          },
        ],
      };
}

/**
 * The same read skew on the BackupJob itself: a run decides from a BackupJob copy older than the
 * operator's own last status write. Only the status can be "already right" on such a copy, so
 * the operator's own status writes also bring one more run once they reach the snapshot.
 */
describe(
  'a lagging BackupJob watch and the operator’s own status write',
  { timeout: 180_000 },
  () => {
    let sys: OperatorSystem;
    before(async () => {
      sys = await startOperatorSystem({
        watchers: 1,
        workers: 1,
        env: FAULT_ENV,
        emulator: { namespaces: [NS] },
      });
      await untilWorking(sys);
    });
    after(() => sys?.stop());

    const NAME = 'status-skew';
    const backupSucceeded = () => condition(getBackupJob(sys, NS, NAME), 'BackupSucceeded')?.status;

    /** A Job as the CronJob would start it, then finished `state` at `at`. */
    function runJob(jobName: string, state: 'succeeded' | 'failed', at: Date): void {
      const template = (
        getCronJob(sys, NS, NAME)?.spec as {
          jobTemplate: { metadata?: { labels?: Record<string, string> }; spec: unknown };
        }
      ).jobTemplate;
      const job = sys.emulator.objects.create({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: jobName, namespace: NS, labels: template.metadata?.labels },
        spec: template.spec,
      } as KubeObject);
      sys.emulator.objects.update({ ...job, status: finished(state, at) }, 'status');
    }

    test('a failed Job deleted while the BackupJob watch fails: BackupSucceeded ends True', async () => {
      expectOk(
        await sys.kubectl(['apply', '-f', '-'], {
          input: JSON.stringify(backupJobManifest(NS, NAME, { schedule: NIGHTLY })),
        }),
        'kubectl apply',
      );
      await eventually('the CronJob', () => getCronJob(sys, NS, NAME));
      runJob(`${NAME}-1`, 'succeeded', new Date(Date.now() - 120_000));
      await eventually(
        'BackupSucceeded True after the first Job',
        () => backupSucceeded() === 'True',
      );

      const storm = sys.emulator.faults.addError({
        match: { user: USERS.watcher, resource: 'backupjobs', verb: ['list', 'watch'] },
        code: 429,
        retryAfterSeconds: 1,
      });
      const dropped = sys.emulator.watches.drop({ user: USERS.watcher, resource: 'backupjobs' });
      assert.equal(dropped, 1, 'the watcher’s BackupJob watch was dropped');
      try {
        // The snapshot keeps the BackupJob as it was; the run writes BackupSucceeded=False over it.
        runJob(`${NAME}-2`, 'failed', new Date());
        await eventually(
          'BackupSucceeded False after the failed Job',
          () => backupSucceeded() === 'False',
        );
        // On the old copy (BackupSucceeded True) with the first Job newest again, the next run
        // finds the status "already right".
        const deletedAt = Date.now();
        sys.emulator.objects.delete('batch/v1', 'Job', `${NAME}-2`, NS);
        await sys.workers[0]!.waitForLine((line) => {
          const l = JSON.parse(line) as { msg?: string; key?: string; time?: string };
          return (
            l.msg === 'reconciled' && l.key === `${NS}/${NAME}` && Date.parse(l.time!) > deletedAt
          );
        }, 30_000);
      } finally {
        sys.emulator.faults.remove(storm);
      }
      await eventually(
        'BackupSucceeded back to True once the BackupJob watch caught up',
        () => backupSucceeded() === 'True',
        60_000,
      );
    });
  },
);
