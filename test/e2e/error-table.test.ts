import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { stringify } from 'yaml';
import type { KubeObject } from '#apiserver-emulator';
import {
  condition,
  eventually,
  jsonLines,
  type ManagedProcess,
  type OperatorSystem,
  startOperatorSystem,
} from '#testing';
import {
  backupJobManifest,
  capture,
  cleanupJob,
  expectOk,
  getBackupJob,
  getCronJob,
  isConverged,
  metricLines,
  metricValue,
  operatorWrites,
  scrapeMetrics,
} from './support.js';

// The common-error table, one row per test: what the user sees AND what the operator says about
// it, then the fix a user would apply and the system recovering. One system serves every row, in
// order: it starts without the CRD and without workers, as the first two rows need.

const RBAC_API = 'rbac.authorization.k8s.io/v1';
const WORKER_ROLE = 'backupjob-operator-worker';
const CRD = 'config/crd/bases/ops.example.com_backupjobs.yaml';

let sys: OperatorSystem;
let watcher: ManagedProcess;
let worker: ManagedProcess;

before(async () => {
  sys = await startOperatorSystem({
    installCrd: false,
    rbac: true,
    watchers: 1,
    workers: 0,
    env: { RESYNC_PERIOD: '3s' },
    emulator: { namespaces: ['ops'], controllers: { jobs: true, cronJobs: { schedule: false } } },
  });
  watcher = sys.watchers[0]!;
});

after(async () => {
  await sys?.stop();
});

async function apply(manifest: KubeObject): Promise<void> {
  expectOk(await sys.kubectl(['apply', '-f', '-'], { input: stringify(manifest) }), 'apply');
}

async function describe(name: string): Promise<string> {
  return expectOk(await sys.kubectl(['describe', 'backupjob', name, '-n', 'ops']), 'describe');
}

async function readyz(proc: ManagedProcess): Promise<number> {
  return (await fetch(`http://127.0.0.1:${sys.portsOf(proc).health}/readyz`)).status;
}

/** Removes from the worker's live ClusterRole what `edit` drops, as a hand-trimmed role would. */
function trimWorkerRole(edit: (rule: { resources: string[]; verbs: string[] }) => string[]) {
  const role = sys.emulator.objects.get(RBAC_API, 'ClusterRole', WORKER_ROLE)!;
  const rules = role.rules as { resources: string[]; verbs: string[] }[];
  role.rules = rules.map((r) => ({ ...r, verbs: edit(r) })).filter((r) => r.verbs.length > 0);
  sys.emulator.objects.update(role);
}

/** The fix a user applies: the RBAC the chart ships. */
async function restoreRbac(): Promise<void> {
  expectOk(await sys.kubectl(['apply', '-f', 'config/rbac/worker.yaml']), 'apply rbac');
}

function forbiddenLines(resource: string) {
  return jsonLines(worker).filter(
    (l) => l.msg === 'forbidden: the operator lacks a permission' && l.resource === resource,
  );
}

test('no CRD: kubectl says "no matches for kind"; the watcher logs its failing list and is not ready', async () => {
  const result = await sys.kubectl(['apply', '-f', 'config/samples/ops_v1alpha1_backupjob.yaml']);
  capture('no CRD: kubectl apply', result.stderr);
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /no matches for kind "BackupJob" in version "ops.example.com\/v1alpha1"/,
  );
  assert.match(result.stderr, /ensure CRDs are installed first/);

  const line = await watcher.waitForLine(
    (l) => l.includes('"list failed"') && l.includes('"resource":"backupjobs.ops.example.com"'),
  );
  capture('no CRD: watcher log', line);
  assert.match(line, /"code":404/);
  const notReady = await fetch(`http://127.0.0.1:${sys.portsOf(watcher).health}/readyz`);
  capture('no CRD: watcher /readyz', `${notReady.status} ${await notReady.text()}`);
  assert.equal(notReady.status, 503);

  expectOk(await sys.kubectl(['apply', '-f', CRD]), 'apply CRD');
  await watcher.waitForLine(
    (l) => l.includes('"msg":"listed"') && l.includes('"resource":"backupjobs.ops.example.com"'),
  );
  await eventually(
    'the watcher to be ready once the CRD exists',
    async () => (await readyz(watcher)) === 200,
  );
});

test('controller not running: the BackupJob exists with no CronJob and no status; the key waits in the queue', async () => {
  await apply(backupJobManifest('ops', 'orphan'));
  const depth = await eventually('the key to wait in the queue', async () => {
    const text = await scrapeMetrics(sys, watcher);
    return metricValue(text, 'workqueue_depth', { name: 'backupjob' }) >= 1 && text;
  });
  capture(
    'controller not running: watcher metric',
    metricLines(depth, 'workqueue_depth').join('\n'),
  );

  const list = expectOk(await sys.kubectl(['get', 'bj', 'orphan', '-n', 'ops']), 'get bj');
  capture('controller not running: kubectl get bj', list);
  assert.match(list, /^orphan\s+mysql\s+10 2 \* \* \*\s+\d+s$/m, 'READY is empty');
  const bj = getBackupJob(sys, 'ops', 'orphan')!;
  assert.equal(bj.status, undefined);
  assert.equal(bj.metadata.finalizers, undefined);
  assert.equal(getCronJob(sys, 'ops', 'orphan'), undefined);
  const cronJobs = await sys.kubectl(['get', 'cronjob', '-n', 'ops']);
  assert.match(cronJobs.stderr, /No resources found in ops namespace/);

  worker = await sys.startWorker();
  await eventually('the waiting key to be reconciled', () => isConverged(sys, 'ops', 'orphan'));
});

test('RBAC missing a permission: Ready=False reason Forbidden, "forbidden" in the log, 403s in the metrics', async () => {
  trimWorkerRole((r) =>
    r.resources.includes('cronjobs') ? r.verbs.filter((v) => v !== 'create') : r.verbs,
  );
  await apply(backupJobManifest('ops', 'rbac-demo'));
  await eventually('Ready=False reason Forbidden', () => {
    return condition(getBackupJob(sys, 'ops', 'rbac-demo'), 'Ready')?.reason === 'Forbidden';
  });
  const ready = condition(getBackupJob(sys, 'ops', 'rbac-demo'), 'Ready')!;
  assert.equal(ready.status, 'False');
  assert.equal(ready.message, 'the operator may not create cronjobs.batch in namespace ops');
  assert.equal(getCronJob(sys, 'ops', 'rbac-demo'), undefined);

  const described = await eventually('a Warning Event saying Forbidden', async () => {
    const out = await describe('rbac-demo');
    return /Warning\s+Forbidden\s+/.test(out) && out;
  });
  capture('RBAC: kubectl describe', described);
  const list = expectOk(await sys.kubectl(['get', 'bj', 'rbac-demo', '-n', 'ops']), 'get');
  capture('RBAC: kubectl get bj', list);
  assert.match(list, /^rbac-demo\s+mysql\s+10 2 \* \* \*\s+false\s+/m);

  const [line] = forbiddenLines('cronjobs');
  assert.ok(line, 'the worker logs the missing permission');
  capture('RBAC: worker log', JSON.stringify(line));
  assert.equal(line.verb, 'create');
  assert.equal(line.group, 'batch');
  assert.equal(line.key, 'ops/rbac-demo');
  const metrics = await scrapeMetrics(sys, worker);
  capture(
    'RBAC: worker metrics',
    [
      ...metricLines(metrics, 'rest_client_requests_total', { code: '403' }),
      ...metricLines(metrics, 'controller_runtime_reconcile_errors_total'),
    ].join('\n'),
  );
  assert.ok(
    metricValue(metrics, 'rest_client_requests_total', { code: '403', method: 'POST' }) >= 1,
  );
  assert.ok(
    metricValue(metrics, 'controller_runtime_reconcile_errors_total', {
      controller: 'backupjob',
    }) >= 1,
  );

  await restoreRbac();
  await eventually('the BackupJob to converge once the role is fixed', () =>
    isConverged(sys, 'ops', 'rbac-demo'),
  );
});

test('status not updating (no /status permission): the CronJob follows but observedGeneration lags; the log says why', async () => {
  trimWorkerRole((r) => (r.resources.includes('backupjobs/status') ? [] : r.verbs));
  const before = metricValue(await scrapeMetrics(sys, worker), 'rest_client_requests_total', {
    code: '403',
  });
  expectOk(
    await sys.kubectl([
      'patch',
      'bj',
      'orphan',
      '-n',
      'ops',
      '--type=merge',
      '-p',
      '{"spec":{"schedule":"45 4 * * *"}}',
    ]),
    'patch',
  );
  await eventually('the CronJob to follow the spec', () => {
    return (
      (getCronJob(sys, 'ops', 'orphan')?.spec as { schedule?: string }).schedule === '45 4 * * *'
    );
  });
  const line = await eventually('the forbidden status write in the log', () =>
    forbiddenLines('backupjobs/status').find((l) => l.key === 'ops/orphan'),
  );
  capture('no /status: worker log', JSON.stringify(line));
  assert.equal(line.group, 'ops.example.com');
  const generation = getBackupJob(sys, 'ops', 'orphan')!.metadata.generation;
  const shown = expectOk(
    await sys.kubectl([
      'get',
      'bj',
      'orphan',
      '-n',
      'ops',
      '-o',
      'jsonpath={.metadata.generation} {.status.observedGeneration}',
    ]),
    'get generation',
  );
  capture('no /status: generation vs observedGeneration', shown);
  assert.equal(shown, `${generation} ${generation! - 1}`);
  const metrics = await scrapeMetrics(sys, worker);
  capture(
    'no /status: worker metrics',
    metricLines(metrics, 'rest_client_requests_total', { code: '403' }).join('\n'),
  );
  assert.ok(metricValue(metrics, 'rest_client_requests_total', { code: '403' }) > before);

  await restoreRbac();
  await eventually('status to catch up once the role is fixed', () =>
    isConverged(sys, 'ops', 'orphan'),
  );
});

test('Terminating stuck on a failing cleanup: reason in status and a Warning Event; it finishes once cleanup works', async () => {
  await apply(backupJobManifest('ops', 'cleanup-demo', { deletionPolicy: 'Delete' }));
  await eventually('the BackupJob to converge', () => isConverged(sys, 'ops', 'cleanup-demo'));
  expectOk(
    await sys.kubectl(['delete', 'bj', 'cleanup-demo', '-n', 'ops', '--wait=false']),
    'delete',
  );
  const first = await cleanupJob(sys, 'ops', 'cleanup-demo', 1);
  sys.emulator.failJob(
    'ops',
    first,
    'BackoffLimitExceeded',
    'Job has reached the specified backoff limit',
  );

  const stuck = await eventually('CleanupSucceeded=False in status', () => {
    const bj = getBackupJob(sys, 'ops', 'cleanup-demo');
    return condition(bj, 'CleanupSucceeded')?.status === 'False' && bj;
  });
  assert.ok(stuck.metadata.deletionTimestamp, 'deletionTimestamp is set');
  assert.deepEqual(stuck.metadata.finalizers, ['backup.ops.example.com/finalizer']);
  const cleanup = condition(stuck, 'CleanupSucceeded')!;
  assert.equal(cleanup.reason, 'BackoffLimitExceeded');
  assert.match(
    cleanup.message!,
    new RegExp(`cleanup Job ${first} failed \\(BackoffLimitExceeded\\)`),
  );
  const described = await eventually('a Warning CleanupFailed Event', async () => {
    const out = await describe('cleanup-demo');
    return /Warning\s+CleanupFailed\s+/.test(out) && out;
  });
  capture('Terminating: kubectl describe', described);
  const meta = expectOk(
    await sys.kubectl([
      'get',
      'bj',
      'cleanup-demo',
      '-n',
      'ops',
      '-o',
      'jsonpath={.metadata.deletionTimestamp} {.metadata.finalizers}',
    ]),
    'get',
  );
  capture('Terminating: deletionTimestamp and finalizers', meta);

  // The cause fixed: the next attempt (after the retry delay) succeeds and the object goes.
  const second = await cleanupJob(sys, 'ops', 'cleanup-demo', 2);
  sys.emulator.completeJob('ops', second);
  await eventually('the BackupJob to be gone', () => !getBackupJob(sys, 'ops', 'cleanup-demo'));
  const gone = await sys.kubectl(['get', 'bj', 'cleanup-demo', '-n', 'ops']);
  assert.match(gone.stderr, /backupjobs.ops.example.com "cleanup-demo" not found/);
});

test('no hot loop: a converged system makes zero writes; its resyncs skip the keys the workers proved converged', async () => {
  const names = ['orphan', 'rbac-demo'];
  for (const name of names) {
    await eventually(`${name} converged`, () => isConverged(sys, 'ops', name));
  }
  const mark = sys.emulator.log.mark();
  const from = worker.lines.length;
  const watcherFrom = watcher.lines.length;
  const reconciles = (name: string) =>
    worker.lines
      .slice(from)
      .filter((l) => l.includes('"msg":"reconcile started"') && l.includes(`"key":"ops/${name}"`))
      .length;
  const rechecks = () =>
    watcher.lines
      .slice(watcherFrom)
      .filter((l) => l.includes('"msg":"rechecked unchanged keys"'))
      .map((l) => JSON.parse(l) as { converged: number; sent: number });
  // A key's first resync may still run it (its last run may have written); from then on its
  // no-op run's mark proves it converged, and two resyncs in a row skip every key.
  await eventually(
    'two resyncs in a row to skip every key',
    () =>
      rechecks()
        .slice(-2)
        .filter((r) => r.converged === names.length && r.sent === 0).length === 2,
    30_000,
  );
  // Lease renewals are the watcher keeping its leadership, not reconcile output.
  const writes = operatorWrites(sys, mark).filter((r) => r.resource !== 'leases');
  capture(
    'no hot loop: reconciles, resyncs and writes',
    `${names.map((n) => `${n}: ${reconciles(n)} reconciles`).join(', ')}; resyncs: ${rechecks()
      .map((r) => `${r.converged} skipped, ${r.sent} sent`)
      .join(' | ')}; writes: ${writes.length}`,
  );
  assert.deepEqual(
    writes.map((r) => `${r.verb} ${r.resource}/${r.subresource} ${r.namespace}/${r.name}`),
    [],
  );
});

test('wrong cluster: both apps log the API server they connected to at start', async () => {
  const server = expectOk(
    await sys.kubectl([
      'config',
      'view',
      '--minify',
      '-o',
      'jsonpath={.clusters[0].cluster.server}',
    ]),
    'config view',
  );
  assert.equal(server, sys.emulator.url);
  for (const proc of [watcher, worker]) {
    const line = await proc.waitForLine((l) => l.includes('"msg":"using API server"'));
    capture(`wrong cluster: ${proc.name} log`, line);
    assert.equal((JSON.parse(line) as { server: string }).server, server);
  }
});
