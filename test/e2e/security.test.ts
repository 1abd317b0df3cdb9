import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { stringify } from 'yaml';
import type { KubeObject } from '#apiserver-emulator';
import { DEFAULT_BACKUP_IMAGE } from '#config';
import { cronJobName } from '#reconciler';
import { condition, eventually, type OperatorSystem, startOperatorSystem } from '#testing';
import { renderChart } from '../deploy/support/helm.js';
import { USERS, backupJobManifest, expectOk, getBackupJob, isConverged } from './support.js';

// The confused-deputy hole: a user who may create BackupJobs, but neither create Pods nor read
// Secrets, must not get a Secret's content into any pod through the operator, nor have backups
// write into a PersistentVolumeClaim they could not mount. RBAC is enforced;
// the user drives the real kubectl. Each route is tried with the chart's admission policy off
// (the operator's own checks stop it) and on (the API server rejects it at create).

const AUTHOR = 'mallory';
const SECRET = 'db-credentials';
const CLAIM = 'shared-data';
const FOREIGN_IMAGE = 'registry.evil.example/exfiltrate:1';

let sys: OperatorSystem;

before(async () => {
  sys = await startOperatorSystem({
    rbac: true,
    watchers: 1,
    workers: 1,
    // An answer cached from before the namespace opted the Secret in would otherwise hold the
    // opted-in BackupJob back for a minute.
    env: { GRANT_RECHECK_INTERVAL: '5s', GRANT_CACHE_TTL: '1s' },
    emulator: { controllers: { jobs: true, cronJobs: { schedule: false } } },
  });
});

after(async () => {
  await sys?.stop();
});

/** The chart's policy and binding, as `helm install` renders them on a cluster that serves them. */
function admissionPolicyDocuments(): KubeObject[] {
  const served = ['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy'];
  return renderChart([], [], served).filter((o) =>
    o.kind.startsWith('ValidatingAdmissionPolicy'),
  ) as KubeObject[];
}

/** A namespace with a Secret, a claim and a user who may only create BackupJobs in it. */
function namespaceWithAuthor(namespace: string): void {
  const create = (obj: Record<string, unknown>) => sys.emulator.objects.create(obj as KubeObject);
  create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: SECRET, namespace },
    stringData: { password: 'hunter2' },
  });
  create({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: CLAIM, namespace },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  const rbac = 'rbac.authorization.k8s.io';
  create({
    apiVersion: `${rbac}/v1`,
    kind: 'Role',
    metadata: { name: 'backupjob-author', namespace },
    rules: [{ apiGroups: ['ops.example.com'], resources: ['backupjobs'], verbs: ['create'] }],
  });
  create({
    apiVersion: `${rbac}/v1`,
    kind: 'RoleBinding',
    metadata: { name: 'backupjob-author', namespace },
    roleRef: { apiGroup: rbac, kind: 'Role', name: 'backupjob-author' },
    subjects: [{ apiGroup: rbac, kind: 'User', name: AUTHOR }],
  });
}

/** What the author runs: `kubectl create` (apply would need get, which the author lacks). */
function createAsAuthor(namespace: string, name: string, spec: Record<string, unknown>) {
  const manifest = backupJobManifest(namespace, name, spec);
  return sys.kubectl(['create', '-f', '-', '--as', AUTHOR], { input: stringify(manifest) });
}

/** Every pod-bearing object in the namespace, as the API server holds it. */
function podSpecs(namespace: string): { where: string; spec: Record<string, unknown> }[] {
  const out: { where: string; spec: Record<string, unknown> }[] = [];
  for (const cj of sys.emulator.objects.list('batch/v1', 'CronJob', namespace)) {
    const spec = (cj.spec as { jobTemplate?: { spec?: { template?: { spec?: object } } } })
      .jobTemplate?.spec?.template?.spec;
    out.push({
      where: `CronJob ${cj.metadata.name}`,
      spec: (spec ?? {}) as Record<string, unknown>,
    });
  }
  for (const job of sys.emulator.objects.list('batch/v1', 'Job', namespace)) {
    const spec = (job.spec as { template?: { spec?: object } }).template?.spec;
    out.push({ where: `Job ${job.metadata.name}`, spec: (spec ?? {}) as Record<string, unknown> });
  }
  for (const pod of sys.emulator.objects.list('v1', 'Pod', namespace)) {
    out.push({ where: `Pod ${pod.metadata.name}`, spec: pod.spec as Record<string, unknown> });
  }
  return out;
}

/**
 * Pod templates that would hand the Secret to code the operator does not trust (the foreign image
 * anywhere, or the Secret mounted beside anything but the operator's reference image), or that
 * mount the claim no grant ever lent.
 */
function leaks(namespace: string): string[] {
  return podSpecs(namespace)
    .filter(({ spec }) => {
      const text = JSON.stringify(spec);
      const images = ((spec.containers ?? []) as { image?: string }[]).map((c) => c.image);
      const mountsSecret = text.includes(`"secretName":"${SECRET}"`);
      return (
        images.includes(FOREIGN_IMAGE) ||
        (mountsSecret && images.some((image) => image !== DEFAULT_BACKUP_IMAGE)) ||
        text.includes(`"claimName":"${CLAIM}"`)
      );
    })
    .map(({ where }) => where);
}

function eventReasons(namespace: string, name: string): string[] {
  return sys.emulator.objects
    .list('events.k8s.io/v1', 'Event', namespace)
    .filter((e) => (e.regarding as { name?: string } | undefined)?.name === name)
    .map((e) => e.reason as string);
}

async function refusedByOperator(namespace: string, name: string, reason: string) {
  // The first answer waits for the processes to start, which a loaded machine slows down.
  const refused = await eventually(
    `${name}: Ready=False ${reason}`,
    () => {
      const ready = condition(getBackupJob(sys, namespace, name), 'Ready');
      return ready?.status === 'False' && ready.reason === reason && ready;
    },
    90_000,
  );
  await eventually(`a ${reason} Event on ${name}`, () =>
    eventReasons(namespace, name).includes(reason),
  );
  return refused;
}

const ROUTES = [
  {
    route: 'the image route (a foreign image with the Secret)',
    spec: { image: FOREIGN_IMAGE, secretRef: { name: SECRET } },
    operatorReason: 'ImageNotAllowed',
    admissionMessage: /may not set spec\.image.*cannot create pods/i,
  },
  {
    route: 'the Secret route (the reference image with a Secret not opted in)',
    spec: { secretRef: { name: SECRET } },
    operatorReason: 'SecretNotAllowed',
    admissionMessage: /may not set spec\.secretRef.*cannot get secret/i,
  },
  {
    route: 'the claim route (backups into a claim the namespace did not lend)',
    spec: { storage: { claimName: CLAIM } },
    operatorReason: 'ClaimNotAllowed',
    admissionMessage: /may not set spec\.storage\.claimName.*cannot create pods/i,
  },
] as const;

test('admission policy off: the operator refuses every route; nothing mounts what it must not', async (t) => {
  const ns = 'team-a';
  namespaceWithAuthor(ns);
  for (const { route, spec, operatorReason } of ROUTES) {
    await t.test(route, async () => {
      const name = operatorReason.toLowerCase();
      expectOk(await createAsAuthor(ns, name, spec), 'the author creates the BackupJob');
      const ready = await refusedByOperator(ns, name, operatorReason);
      assert.match(
        ready.message ?? '',
        operatorReason === 'ImageNotAllowed' ? /image/ : /opted in/,
      );
      assert.equal(
        sys.emulator.objects.get('batch/v1', 'CronJob', cronJobName(name), ns),
        undefined,
      );
      assert.deepEqual(leaks(ns), []);
    });
  }

  await t.test(
    'once the namespace opts the Secret in, a foreign image still gets nothing',
    async () => {
      // The namespace owner's two commands from docs/security.md.
      const worker = USERS.worker.split(':');
      expectOk(
        await sys.kubectl([
          'create',
          'role',
          'backup-credentials',
          '-n',
          ns,
          '--verb=get',
          '--resource=secrets',
          `--resource-name=${SECRET}`,
        ]),
        'create role',
      );
      expectOk(
        await sys.kubectl([
          'create',
          'rolebinding',
          'backup-credentials',
          '-n',
          ns,
          '--role=backup-credentials',
          `--serviceaccount=${worker[2]}:${worker[3]}`,
        ]),
        'create rolebinding',
      );
      const opted = 'opted-in';
      expectOk(await createAsAuthor(ns, opted, { secretRef: { name: SECRET } }), 'create');
      await eventually(`${opted} to converge`, () => isConverged(sys, ns, opted), 90_000);
      const cronJob = sys.emulator.objects.get('batch/v1', 'CronJob', cronJobName(opted), ns);
      assert.match(JSON.stringify(cronJob?.spec), new RegExp(`"secretName":"${SECRET}"`));
      // A run makes the pod: it holds the Secret, with the operator's own image only.
      sys.emulator.runCronJob(ns, cronJobName(opted));
      await eventually('the backup pod', () =>
        podSpecs(ns).some(
          ({ where, spec }) =>
            where.startsWith('Pod ') && JSON.stringify(spec).includes(`"secretName":"${SECRET}"`),
        ),
      );
      // The operator's image with an opted-in Secret is the intended use; a foreign one is not.
      const foreign = 'foreign-after-opt-in';
      expectOk(
        await createAsAuthor(ns, foreign, { image: FOREIGN_IMAGE, secretRef: { name: SECRET } }),
        'create',
      );
      await refusedByOperator(ns, foreign, 'ImageNotAllowed');
      assert.deepEqual(leaks(ns), []);
    },
  );

  await t.test('the operator never read a Secret: it asked about them instead', () => {
    for (const user of [USERS.watcher, USERS.worker]) {
      assert.equal(sys.emulator.log.count({ user, resource: 'secrets' }), 0, user);
    }
    assert.ok(
      sys.emulator.log.count({ user: USERS.worker, resource: 'selfsubjectaccessreviews' }) > 0,
    );
  });
});

test('admission policy on: the API server rejects every route at create', async (t) => {
  const ns = 'team-b';
  namespaceWithAuthor(ns);
  const policy = admissionPolicyDocuments();
  for (const doc of policy) sys.emulator.objects.create(doc);
  t.after(() => {
    for (const doc of policy.reverse())
      sys.emulator.objects.delete(doc.apiVersion!, doc.kind!, doc.metadata.name!);
  });
  for (const { route, spec, admissionMessage } of ROUTES) {
    await t.test(route, async () => {
      const result = await createAsAuthor(ns, 'rejected', spec);
      assert.notEqual(result.code, 0, 'kubectl create must fail');
      assert.match(result.stderr, admissionMessage);
      assert.equal(getBackupJob(sys, ns, 'rejected'), undefined);
      assert.deepEqual(leaks(ns), []);
    });
  }

  await t.test('a BackupJob that sets neither passes the policy', async () => {
    expectOk(await createAsAuthor(ns, 'plain', {}), 'create');
    await eventually('plain to converge', () => isConverged(sys, ns, 'plain'), 90_000);
  });

  await t.test('a user who could create the pod and read the Secret passes it', async () => {
    const spec = { image: FOREIGN_IMAGE, secretRef: { name: SECRET } };
    const manifest = backupJobManifest(ns, 'trusted', spec);
    // The admin may do both; the operator's allowlist still applies to what it creates.
    expectOk(await sys.kubectl(['create', '-f', '-'], { input: stringify(manifest) }), 'create');
    await refusedByOperator(ns, 'trusted', 'ImageNotAllowed');
  });
});
