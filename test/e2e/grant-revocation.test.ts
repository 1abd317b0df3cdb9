import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import type { KubeObject } from '#apiserver-emulator';
import { cronJobName } from '#reconciler';
import { condition, eventually, type OperatorSystem, startOperatorSystem } from '#testing';
import {
  USERS,
  backupJobManifest,
  expectOk,
  getBackupJob,
  isConverged,
  metricValue,
  operatorWrites,
  scrapeMetrics,
} from './support.js';

// Revoked means revoked. A namespace owner lends a Secret and a PersistentVolumeClaim to backups
// with RBAC grants, a BackupJob author (who may create BackupJobs and nothing else) uses them,
// then the owner withdraws a grant with kubectl. Nothing the watcher sees changes: only the
// workers' periodic re-check can notice, which here runs every 2 s with answers cached for 1 s.
// RBAC is enforced; watcher and worker are real processes; kubectl is the client throughout.

const NS = 'team-r';
const AUTHOR = 'rita';
const SECRET = 'db-credentials';
const CLAIM = 'team-backups';
const BJ = 'nightly';
const CRONJOB = cronJobName(BJ);
const RBAC = 'rbac.authorization.k8s.io';

let sys: OperatorSystem;

before(async () => {
  sys = await startOperatorSystem({
    rbac: true,
    watchers: 1,
    workers: 1,
    env: { GRANT_RECHECK_INTERVAL: '2s', GRANT_CACHE_TTL: '1s' },
    emulator: { controllers: { jobs: true, cronJobs: { schedule: false } } },
  });
  const create = (obj: Record<string, unknown>) => sys.emulator.objects.create(obj as KubeObject);
  create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: SECRET, namespace: NS },
    stringData: { password: 'hunter2' },
  });
  create({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: CLAIM, namespace: NS },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  create({
    apiVersion: `${RBAC}/v1`,
    kind: 'Role',
    metadata: { name: 'backupjob-author', namespace: NS },
    rules: [
      { apiGroups: ['ops.example.com'], resources: ['backupjobs'], verbs: ['create', 'get'] },
    ],
  });
  create({
    apiVersion: `${RBAC}/v1`,
    kind: 'RoleBinding',
    metadata: { name: 'backupjob-author', namespace: NS },
    roleRef: { apiGroup: RBAC, kind: 'Role', name: 'backupjob-author' },
    subjects: [{ apiGroup: RBAC, kind: 'User', name: AUTHOR }],
  });
});

after(async () => {
  await sys?.stop();
});

const [, , WORKER_NS, WORKER_SA] = USERS.worker.split(':') as [string, string, string, string];

/** The namespace owner's two commands from docs/security.md, for one object. */
async function grant(role: string, resource: string, name: string): Promise<void> {
  expectOk(
    await sys.kubectl([
      'create',
      'role',
      role,
      '-n',
      NS,
      '--verb=get',
      `--resource=${resource}`,
      `--resource-name=${name}`,
    ]),
    `create role ${role}`,
  );
  await bind(role);
}

async function bind(role: string): Promise<void> {
  expectOk(
    await sys.kubectl([
      'create',
      'rolebinding',
      role,
      '-n',
      NS,
      `--role=${role}`,
      `--serviceaccount=${WORKER_NS}:${WORKER_SA}`,
    ]),
    `create rolebinding ${role}`,
  );
}

async function withdraw(role: string): Promise<void> {
  expectOk(await sys.kubectl(['delete', 'rolebinding', role, '-n', NS]), `delete ${role}`);
}

interface PodTemplate {
  volumes?: { name: string; secret?: { secretName: string }; persistentVolumeClaim?: object }[];
  containers: { volumeMounts?: { name: string }[] }[];
}

function cronJob(): (KubeObject & { spec: Record<string, unknown> }) | undefined {
  return sys.emulator.objects.get('batch/v1', 'CronJob', CRONJOB, NS);
}

function template(): PodTemplate {
  const spec = cronJob()?.spec as { jobTemplate: { spec: { template: { spec: PodTemplate } } } };
  return spec.jobTemplate.spec.template.spec;
}

function mountsSecret(pod: PodTemplate): boolean {
  return (pod.volumes ?? []).some((v) => v.secret?.secretName === SECRET);
}

function mountsClaim(pod: PodTemplate): boolean {
  return JSON.stringify(pod.volumes ?? []).includes(`"claimName":"${CLAIM}"`);
}

function ready(): { status?: string; reason?: string; message?: string } | undefined {
  return condition(getBackupJob(sys, NS, BJ), 'Ready');
}

async function waitRefused(reason: string) {
  return eventually(`Ready=False ${reason} and the CronJob suspended`, () => {
    const r = ready();
    return r?.status === 'False' && r.reason === reason && cronJob()?.spec.suspend === true && r;
  });
}

async function waitRestored() {
  await eventually('the CronJob restored and Ready=True', () => {
    const pod = template();
    return (
      isConverged(sys, NS, BJ) &&
      cronJob()?.spec.suspend === false &&
      mountsSecret(pod) &&
      mountsClaim(pod)
    );
  });
}

/** What a user reads: the Warning Events on the BackupJob, from kubectl. */
async function warnings(): Promise<string> {
  return expectOk(
    await sys.kubectl([
      'get',
      'events',
      '-n',
      NS,
      '--field-selector',
      `involvedObject.name=${BJ},type=Warning`,
      '-o',
      'custom-columns=REASON:.reason,MESSAGE:.message',
      '--no-headers',
    ]),
    'kubectl get events',
  );
}

describe('a withdrawn grant', () => {
  test('with both grants, the author gets a CronJob that mounts the Secret and the claim', async () => {
    await grant('backup-credentials', 'secrets', SECRET);
    await grant('backup-storage', 'persistentvolumeclaims', CLAIM);
    const manifest = backupJobManifest(NS, BJ, {
      secretRef: { name: SECRET },
      storage: { claimName: CLAIM },
    });
    expectOk(
      await sys.kubectl(['create', '-f', '-', '--as', AUTHOR], { input: stringify(manifest) }),
      'the author creates the BackupJob',
    );
    // The first answer waits for the processes to start, which a loaded machine slows down.
    await eventually('the BackupJob to converge', () => isConverged(sys, NS, BJ), 90_000);
    await waitRestored();
  });

  test('Secret: the CronJob is suspended and no longer mounts it; status and a Warning say why', async () => {
    await withdraw('backup-credentials');
    const refused = await waitRefused('SecretNotAllowed');
    assert.match(refused.message ?? '', new RegExp(`secrets/${SECRET} in namespace ${NS}`));
    assert.match(refused.message ?? '', new RegExp(`CronJob ${CRONJOB} is suspended`));
    const pod = template();
    assert.equal(mountsSecret(pod), false);
    assert.ok(mountsClaim(pod), 'the claim is still opted in and stays');
    assert.ok(
      pod.containers.every((c) => !(c.volumeMounts ?? []).some((m) => m.name === 'credentials')),
    );
    const events = await eventually('the Warning Events', async () => {
      const text = await warnings();
      return /SecretNotAllowed/.test(text) && /CronJobSuspended/.test(text) && text;
    });
    assert.match(events, new RegExp(`SecretNotAllowed\\s+Secret "${SECRET}" is not opted in`));
    const describe = expectOk(
      await sys.kubectl(['describe', 'backupjob', BJ, '-n', NS]),
      'kubectl describe',
    );
    assert.match(describe, /SecretNotAllowed/);
  });

  test('re-checks of the withheld BackupJob write nothing (no loop with the watcher)', async () => {
    const reconciles = async () =>
      metricValue(await scrapeMetrics(sys, sys.workers[0]!), 'controller_runtime_reconcile_total');
    const mark = sys.emulator.log.mark();
    const from = await reconciles();
    await eventually('three more reconciles', async () => (await reconciles()) >= from + 3);
    const writes = operatorWrites(sys, mark).filter(
      (r) => !['selfsubjectaccessreviews', 'leases'].includes(r.resource),
    );
    assert.deepEqual(
      writes.map((r) => `${r.verb} ${r.resource}`),
      [],
    );
  });

  test('a Job made by hand from the withheld CronJob gets no Secret either', async () => {
    expectOk(
      await sys.kubectl(['create', 'job', 'by-hand', `--from=cronjob/${CRONJOB}`, '-n', NS]),
      'kubectl create job --from',
    );
    const job = await eventually('the Job', () =>
      sys.emulator.objects.get('batch/v1', 'Job', 'by-hand', NS),
    );
    const spec = (job.spec as { template: { spec: PodTemplate } }).template.spec;
    assert.equal(mountsSecret(spec), false);
    expectOk(await sys.kubectl(['delete', 'job', 'by-hand', '-n', NS]), 'delete the Job');
  });

  test('Secret: restoring the grant restores the CronJob', async () => {
    await bind('backup-credentials');
    await waitRestored();
    assert.equal(ready()?.status, 'True');
  });

  test('claim: the CronJob is suspended and no longer mounts it; restoring brings it back', async () => {
    await withdraw('backup-storage');
    const refused = await waitRefused('ClaimNotAllowed');
    assert.match(
      refused.message ?? '',
      new RegExp(`PersistentVolumeClaim "${CLAIM}" is not opted in`),
    );
    const pod = template();
    assert.equal(mountsClaim(pod), false);
    assert.ok(mountsSecret(pod), 'the Secret is still opted in and stays');
    await eventually('a ClaimNotAllowed Warning', async () =>
      /ClaimNotAllowed/.test(await warnings()),
    );
    await bind('backup-storage');
    await waitRestored();
  });

  test('the operator asked about the grants and never read the Secret or the claim', () => {
    for (const user of [USERS.watcher, USERS.worker]) {
      for (const resource of ['secrets', 'persistentvolumeclaims']) {
        assert.equal(sys.emulator.log.count({ user, resource }), 0, `${user} ${resource}`);
      }
    }
    assert.ok(
      sys.emulator.log.count({ user: USERS.worker, resource: 'selfsubjectaccessreviews' }) > 0,
    );
  });
});

test('a claim that was never opted in: ClaimNotAllowed and no CronJob', async () => {
  const name = 'foreign-claim';
  const manifest = backupJobManifest(NS, name, { storage: { claimName: 'someone-elses' } });
  expectOk(
    await sys.kubectl(['create', '-f', '-', '--as', AUTHOR], { input: stringify(manifest) }),
    'the author creates the BackupJob',
  );
  const refused = await eventually('Ready=False ClaimNotAllowed', () => {
    const r = condition(getBackupJob(sys, NS, name), 'Ready');
    return r?.reason === 'ClaimNotAllowed' && r;
  });
  assert.equal(refused.status, 'False');
  assert.equal(sys.emulator.objects.get('batch/v1', 'CronJob', cronJobName(name), NS), undefined);
});
