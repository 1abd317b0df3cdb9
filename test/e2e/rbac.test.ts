import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RequestRecord } from '#apiserver-emulator';
import { API_VERSION, KIND, MANAGED_BY_VALUE } from '#api';
import { permissions, type Component, type PermissionRule } from '#rbac';
import { cronJobName } from '#reconciler';
import {
  condition,
  eventually,
  foreignCronJob,
  OPERATOR_NAMESPACE,
  type OperatorSystem,
  startOperatorSystem,
} from '#testing';
import {
  USERS,
  backupJobManifest,
  cleanupJob,
  getBackupJob,
  getCronJob,
  isConverged,
} from './support.js';

// The operator under exactly the chart's ServiceAccounts and rules (config/rbac, generated from
// libs/rbac/src/permissions.ts), RBAC enforced: every flow completes without one 403, and every
// rule is exercised by some request, so the rules are neither missing nor wider than the code.

let sys: OperatorSystem;

before(async () => {
  sys = await startOperatorSystem({
    rbac: true,
    watchers: 2,
    workers: 1,
    emulator: { namespaces: ['ops'], controllers: { jobs: true, cronJobs: { schedule: false } } },
  });
});

after(async () => {
  await sys?.stop();
});

const converged = (name: string) =>
  eventually(`${name} to converge`, () => isConverged(sys, 'ops', name));

const gone = (name: string) =>
  eventually(`${name} to be gone`, () => !getBackupJob(sys, 'ops', name), 60_000);

function cronJobSchedule(name: string): string | undefined {
  return (getCronJob(sys, 'ops', name)?.spec as { schedule?: string } | undefined)?.schedule;
}

test('every flow completes under the chart RBAC with zero 403s', async (t) => {
  await t.test('create and update', async () => {
    sys.emulator.objects.create(backupJobManifest('ops', 'app'));
    await converged('app');
    sys.emulator.objects.patch(API_VERSION, KIND, 'app', 'ops', {
      spec: { schedule: '0 5 * * *' },
    });
    await eventually('the CronJob to follow', () => cronJobSchedule('app') === '0 5 * * *');
    await converged('app');
  });

  await t.test('a user edits and deletes the CronJob; the operator restores it', async () => {
    sys.emulator.objects.patch('batch/v1', 'CronJob', cronJobName('app'), 'ops', {
      spec: { schedule: '1 1 * * *' },
    });
    await eventually('the schedule to be restored', () => cronJobSchedule('app') === '0 5 * * *');
    sys.emulator.objects.delete('batch/v1', 'CronJob', cronJobName('app'), 'ops');
    await eventually('the CronJob to be made again', () => cronJobSchedule('app') === '0 5 * * *');
    await converged('app');
  });

  await t.test('a backup Job succeeds, then one fails', async () => {
    const ok = sys.emulator.runCronJob('ops', cronJobName('app'));
    sys.emulator.completeJob('ops', ok.metadata.name!);
    await eventually(
      'lastBackupTime',
      () => getBackupJob(sys, 'ops', 'app')?.status?.lastBackupTime,
    );
    assert.equal(condition(getBackupJob(sys, 'ops', 'app'), 'BackupSucceeded')?.status, 'True');
    const bad = sys.emulator.runCronJob('ops', cronJobName('app'));
    sys.emulator.failJob(
      'ops',
      bad.metadata.name!,
      'DeadlineExceeded',
      'Job was active longer than specified deadline',
    );
    const failed = await eventually('BackupSucceeded=False', () => {
      const c = condition(getBackupJob(sys, 'ops', 'app'), 'BackupSucceeded');
      return c?.status === 'False' && c;
    });
    assert.equal(failed.reason, 'DeadlineExceeded');
  });

  await t.test(
    "a CronJob of the name that is someone else's: reported, never taken over",
    async () => {
      // Not labelled as the operator's, so no snapshot holds it: the worker's create meets it and
      // that run reads the BackupJob, the CronJob and the Jobs from the API server.
      sys.emulator.objects.create(foreignCronJob('ops', cronJobName('taken')));
      sys.emulator.objects.create(backupJobManifest('ops', 'taken'));
      await eventually(
        'Ready=False CronJobConflict',
        () => condition(getBackupJob(sys, 'ops', 'taken'), 'Ready')?.reason === 'CronJobConflict',
      );
      assert.equal(cronJobSchedule('taken'), '@yearly');
      sys.emulator.objects.delete(API_VERSION, KIND, 'taken', 'ops');
      await gone('taken');
    },
  );

  await t.test('delete with deletionPolicy Retain', async () => {
    sys.emulator.objects.delete(API_VERSION, KIND, 'app', 'ops');
    await gone('app');
  });

  await t.test(
    'delete with deletionPolicy Delete: a failed cleanup is retried, then it finishes',
    async () => {
      sys.emulator.objects.create(backupJobManifest('ops', 'wipe', { deletionPolicy: 'Delete' }));
      await converged('wipe');
      sys.emulator.objects.delete(API_VERSION, KIND, 'wipe', 'ops');
      const first = await cleanupJob(sys, 'ops', 'wipe', 1);
      sys.emulator.failJob('ops', first);
      const second = await cleanupJob(sys, 'ops', 'wipe', 2);
      sys.emulator.completeJob('ops', second);
      await gone('wipe');
    },
  );

  const denied = sys.emulator.log
    .entries({ code: 403 })
    .filter((r) => r.user === USERS.watcher || r.user === USERS.worker);
  assert.deepEqual(denied.map(describeRequest), []);
});

function describeRequest(r: RequestRecord): string {
  return `${r.user.split(':').pop()} ${r.verb} ${r.group}/${r.resource}${r.subresource ? `/${r.subresource}` : ''} ${r.namespace}/${r.name} → ${r.code}`;
}

/** Whether an allowed request of this component is what (verb, group, resource) of the rule grants. */
function used(
  component: Component,
  rule: PermissionRule,
  verb: string,
  group: string,
  resource: string,
) {
  const [plural, subresource = ''] = resource.split('/');
  return sys.emulator.log
    .entries({ user: USERS[component], verb, group })
    .some(
      (r) =>
        r.code !== 403 &&
        r.resource === plural &&
        r.subresource === subresource &&
        (rule.scope === 'cluster' || r.namespace === OPERATOR_NAMESPACE),
    );
}

/**
 * OwnerReferencesPermissionEnforcement checks `update backupjobs/finalizers` inside the create of
 * a child with blockOwnerDeletion; no request of its own shows it, the child it let through does.
 */
function usedByAdmission(resource: string, verb: string): boolean {
  if (resource !== 'backupjobs/finalizers' || verb !== 'update') return false;
  return sys.emulator.log
    .entries({ user: USERS.worker, verb: 'create', group: 'batch', resource: 'cronjobs' })
    .some((r) => r.code === 201);
}

test('every rule of permissions.ts is used by the flows above (none is wider than the code)', () => {
  const unused: string[] = [];
  for (const component of Object.keys(permissions) as Component[]) {
    for (const rule of permissions[component]) {
      for (const group of rule.apiGroups) {
        for (const resource of rule.resources) {
          for (const verb of rule.verbs) {
            if (used(component, rule, verb, group, resource) || usedByAdmission(resource, verb))
              continue;
            unused.push(`${component}: ${verb} ${group}/${resource} (${rule.why})`);
          }
        }
      }
    }
  }
  assert.deepEqual(unused, []);
});

test('every request of the operator names its process in the User-Agent', () => {
  const agents = (component: 'watcher' | 'worker') => [
    ...new Set(sys.emulator.log.entries({ user: USERS[component] }).map((r) => r.userAgent)),
  ];
  assert.deepEqual(
    { watcher: agents('watcher'), worker: agents('worker') },
    { watcher: [`${MANAGED_BY_VALUE}/watcher`], worker: [`${MANAGED_BY_VALUE}/worker`] },
  );
});
