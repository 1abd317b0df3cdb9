import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { condition, eventually, type OperatorSystem, startOperatorSystem } from '#testing';
import { capture, expectOk, getBackupJob, getCronJob, isConverged } from './support.js';

// A user's first day, with the real kubectl: install the CRD, check the API knows the kind, apply
// the sample, read what the operator made and said, change the schedule, delete it and watch it go.

const SAMPLE = 'config/samples/ops_v1alpha1_backupjob.yaml';
const CRD = 'config/crd/bases/ops.example.com_backupjobs.yaml';

let sys: OperatorSystem;

before(async () => {
  sys = await startOperatorSystem({ installCrd: false, watchers: 2, workers: 1 });
});

after(async () => {
  await sys?.stop();
});

/** `kubectl get bj -A -w` as a user runs it in a second terminal. */
function watchBackupJobs(kubeconfigPath: string) {
  const child = spawn(
    'kubectl',
    ['--kubeconfig', kubeconfigPath, 'get', 'bj', '-A', '-w', '--output-watch-events'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    get output() {
      return output;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

test('with the real kubectl: install the CRD, apply the sample, inspect, change, delete', async (t) => {
  await t.test('kubectl installs the CRD and the API serves the kind', async () => {
    const applied = expectOk(await sys.kubectl(['apply', '-f', CRD]), 'apply CRD');
    assert.match(
      applied,
      /customresourcedefinition.apiextensions.k8s.io\/backupjobs.ops.example.com created/,
    );
    const crds = expectOk(await sys.kubectl(['get', 'crd']), 'get crd');
    capture('kubectl get crd', crds);
    assert.match(crds, /^backupjobs\.ops\.example\.com\s+\d{4}-/m);
    const resources = expectOk(await sys.kubectl(['api-resources']), 'api-resources');
    const line = resources.split('\n').find((l) => /\bBackupJob$/.test(l.trim()));
    assert.ok(line, `api-resources lists BackupJob:\n${resources}`);
    assert.match(line, /^backupjobs\s+bj\s+ops\.example\.com\/v1alpha1\s+true\s+BackupJob/);
  });

  await t.test(
    'the sample applies to a fresh cluster (it brings its namespace) and the operator makes its CronJob',
    async () => {
      const applied = expectOk(await sys.kubectl(['apply', '-f', SAMPLE]), 'apply sample');
      capture('kubectl apply -f config/samples/ops_v1alpha1_backupjob.yaml', applied);
      assert.match(applied, /^namespace\/ops created$/m);
      assert.match(applied, /backupjob.ops.example.com\/mysql-daily created/);
      await eventually('the sample to converge', () => isConverged(sys, 'ops', 'mysql-daily'));

      const list = expectOk(await sys.kubectl(['get', 'backupjob', '-A']), 'get backupjob');
      capture('kubectl get backupjob -A', list);
      assert.match(list, /^NAMESPACE\s+NAME\s+TARGET\s+SCHEDULE\s+READY\s+LAST BACKUP\s+AGE/);
      assert.match(list, /^ops\s+mysql-daily\s+mysql\s+10 2 \* \* \*\s+true\s+/m);

      const cronJobs = expectOk(await sys.kubectl(['get', 'cronjob', '-n', 'ops']), 'get cronjob');
      capture('kubectl get cronjob -n ops', cronJobs);
      assert.match(cronJobs, /^mysql-daily-backup\s+10 2 \* \* \*\s+<none>\s+false\s+0\s+/m);
      const owner = getCronJob(sys, 'ops', 'mysql-daily')!.metadata.ownerReferences?.[0];
      assert.equal(owner?.uid, getBackupJob(sys, 'ops', 'mysql-daily')!.metadata.uid);
      assert.equal(owner?.controller, true);
    },
  );

  await t.test('describe shows the conditions and the Events', async () => {
    const described = await eventually('describe to show the CronJobCreated Event', async () => {
      const out = expectOk(
        await sys.kubectl(['describe', 'backupjob', 'mysql-daily', '-n', 'ops']),
        'describe',
      );
      return /Normal\s+CronJobCreated\s+.*created CronJob mysql-daily-backup/.test(out) && out;
    });
    capture('kubectl describe backupjob mysql-daily -n ops', described);
    assert.match(described, /Finalizers:\s+backup\.ops\.example\.com\/finalizer/);
    assert.match(
      described,
      /Message:\s+CronJob mysql-daily-backup matches the spec\s+Observed Generation:\s+1\s+Reason:\s+CronJobReady\s+Status:\s+True\s+Type:\s+Ready/,
    );
    assert.match(described, /Type:\s+BackupSucceeded/);
  });

  const watch = watchBackupJobs(sys.kubeconfigPath);
  try {
    await eventually('the watch to list the BackupJob', () =>
      /ADDED\s+ops\s+mysql-daily/.test(watch.output),
    );

    await t.test('a schedule change reaches the CronJob; Ready does not flip', async () => {
      const before = getBackupJob(sys, 'ops', 'mysql-daily')!;
      const readySince = condition(before, 'Ready')!.lastTransitionTime;
      expectOk(
        await sys.kubectl([
          'patch',
          'backupjob',
          'mysql-daily',
          '-n',
          'ops',
          '--type=merge',
          '-p',
          '{"spec":{"schedule":"30 3 * * *"}}',
        ]),
        'patch',
      );
      await eventually('the CronJob to follow the patch', () => {
        const cj = getCronJob(sys, 'ops', 'mysql-daily');
        return (cj?.spec as { schedule?: string }).schedule === '30 3 * * *';
      });
      await eventually('observedGeneration 2', () => isConverged(sys, 'ops', 'mysql-daily'));

      const edited = readFileSync(SAMPLE, 'utf8').replace(
        "schedule: '10 2 * * *'",
        "schedule: '@daily'",
      );
      assert.match(edited, /@daily/);
      expectOk(await sys.kubectl(['apply', '-f', '-'], { input: edited }), 'apply edited');
      await eventually('the CronJob to follow the apply', () => {
        const bj = getBackupJob(sys, 'ops', 'mysql-daily');
        const cj = getCronJob(sys, 'ops', 'mysql-daily');
        return (
          bj?.metadata.generation === 3 &&
          (cj?.spec as { schedule?: string }).schedule === '@daily' &&
          isConverged(sys, 'ops', 'mysql-daily')
        );
      });
      const now = getBackupJob(sys, 'ops', 'mysql-daily')!;
      assert.equal(now.status?.observedGeneration, 3);
      assert.equal(condition(now, 'Ready')!.lastTransitionTime, readySince);
      await eventually(
        'the watch to show both schedules',
        () =>
          /MODIFIED\s+ops\s+mysql-daily\s+mysql\s+30 3 \* \* \*/.test(watch.output) &&
          /MODIFIED\s+ops\s+mysql-daily\s+mysql\s+@daily/.test(watch.output),
      );
    });

    await t.test(
      'kubectl delete returns once the finalizer is off; the CronJob follows',
      async () => {
        const deleted = expectOk(
          await sys.kubectl(['delete', 'backupjob', 'mysql-daily', '-n', 'ops']),
          'delete',
        );
        assert.match(deleted, /backupjob.ops.example.com "mysql-daily" deleted/);
        assert.equal(getBackupJob(sys, 'ops', 'mysql-daily'), undefined);
        await eventually(
          'the garbage collector to remove the CronJob',
          () => getCronJob(sys, 'ops', 'mysql-daily') === undefined,
        );
        const cronJobs = await sys.kubectl(['get', 'cronjob', '-n', 'ops']);
        assert.match(cronJobs.stderr, /No resources found in ops namespace/);
        await eventually('the watch to see it go', () =>
          /DELETED\s+ops\s+mysql-daily/.test(watch.output),
        );
        capture('kubectl get bj -A -w --output-watch-events', watch.output);
      },
    );
  } finally {
    await watch.stop();
  }
});
