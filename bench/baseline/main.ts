/**
 * The baseline the benchmarks compare against: the operator a user would write with client-node
 * alone, in one process. It runs the same pure reconciler as the worker, fed from client-node
 * informer caches (no API reads per reconcile) through an in-memory client-go workqueue.
 *
 * Environment: KUBECONFIG, CONCURRENCY (default 10), METRICS_PORT (default 0: none),
 * RESYNC_PERIOD_SECONDS (default 0: none). The informers' initial list enqueues every BackupJob,
 * and so does each resync: every key in the cache, as client-go's resync re-delivers its objects.
 */
import { hostname } from 'node:os';
import {
  BatchV1Api,
  CustomObjectsApi,
  KubeConfig,
  makeInformer,
  type KubernetesListObject,
  type V1CronJob,
  type V1Job,
} from '@kubernetes/client-node';
import {
  GROUP,
  LABEL_MANAGED_BY,
  LABEL_OWNER_NAME,
  MANAGED_BY_VALUE,
  PLURAL,
  VERSION,
  type BackupJob,
} from '#api';
import { objectKey, splitKey, type KubeObject } from '#kube';
import { ActionExecutor, EventRecorder, REPORTING_CONTROLLER } from '#controller';
import { createOperatorMetrics, Logger, serveMetrics } from '#observability';
import { WorkQueueMetrics } from '#queue';
import {
  cronJobName,
  ownerLabelValue,
  reconcile,
  reconcilerConfig,
  type Result,
} from '#reconciler';
import { createGeneratedClients } from './generated-clients.js';
import { RateLimitingQueue } from './workqueue.js';
import { backupJobKeyOfCronJob, backupJobKeyOfJob, backupJobUpdatePredicate } from '#watch';

const CONTROLLER = 'backupjob';
const SELECTOR = `${LABEL_MANAGED_BY}=${MANAGED_BY_VALUE}`;

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

const concurrency = Math.max(1, intEnv('CONCURRENCY', 10));
const metricsPort = intEnv('METRICS_PORT', 0);
const resyncPeriodSeconds = intEnv('RESYNC_PERIOD_SECONDS', 0);
const instance = `${hostname()}-${process.pid}`;

const kc = new KubeConfig();
if (!process.env.KUBECONFIG)
  throw new Error('KUBECONFIG must name the kubeconfig of the API server');
kc.loadFromFile(process.env.KUBECONFIG);
// The worker's own write path (same requests, preconditions and Event aggregation) over
// client-node's generated APIs, so the two differ in how they read, queue and send.
const clients = createGeneratedClients(kc);
const logger = new Logger({ level: 'warn' });
const executor = new ActionExecutor(
  clients,
  new EventRecorder(clients, { controller: REPORTING_CONTROLLER, instance }),
  logger,
);
const custom = kc.makeApiClient(CustomObjectsApi);
const batch = kc.makeApiClient(BatchV1Api);

const metrics = createOperatorMetrics();
const recorder = metrics.controller.forController(CONTROLLER, concurrency);
const queue = new RateLimitingQueue<string>(
  new WorkQueueMetrics(metrics.registry, CONTROLLER, CONTROLLER),
);

const backupJobs = makeInformer<BackupJob>(
  kc,
  `/apis/${GROUP}/${VERSION}/${PLURAL}`,
  () =>
    custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL }) as Promise<
      KubernetesListObject<BackupJob>
    >,
);
const cronJobs = makeInformer<V1CronJob>(
  kc,
  '/apis/batch/v1/cronjobs',
  () => batch.listCronJobForAllNamespaces({ labelSelector: SELECTOR }),
  SELECTOR,
);
const jobs = makeInformer<V1Job>(
  kc,
  '/apis/batch/v1/jobs',
  () => batch.listJobForAllNamespaces({ labelSelector: SELECTOR }),
  SELECTOR,
);

/** Jobs by `namespace/owner-label`, the index a reconcile looks its Jobs up in. */
const jobsByOwner = new Map<string, Map<string, V1Job>>();
function indexJob(job: V1Job, present: boolean): void {
  const id = `${job.metadata?.namespace}/${job.metadata?.labels?.[LABEL_OWNER_NAME] ?? ''}`;
  let set = jobsByOwner.get(id);
  if (!set) jobsByOwner.set(id, (set = new Map()));
  if (present) set.set(job.metadata?.name ?? '', job);
  else set.delete(job.metadata?.name ?? '');
}

/** The informer's update callback carries no old object; the predicate needs one. */
const lastSeen = new Map<string, KubeObject>();
const passes = backupJobUpdatePredicate(MANAGED_BY_VALUE);
const onBackupJob = (present: boolean) => (bj: BackupJob) => {
  const obj = bj as unknown as KubeObject;
  const key = objectKey(obj);
  const old = lastSeen.get(key);
  if (present) lastSeen.set(key, obj);
  else lastSeen.delete(key);
  if (present && old && !passes(old, obj)) return;
  queue.add(key);
};
backupJobs.on('add', onBackupJob(true));
backupJobs.on('update', onBackupJob(true));
backupJobs.on('delete', onBackupJob(false));
const enqueueCronJob = (cj: V1CronJob) => {
  const key = backupJobKeyOfCronJob(cj as unknown as KubeObject);
  if (key) queue.add(key);
};
for (const verb of ['add', 'update', 'delete'] as const) cronJobs.on(verb, enqueueCronJob);
const lookupCronJob = (namespace: string, name: string) =>
  cronJobs.get(name, namespace) as unknown as KubeObject | undefined;
const onJob = (present: boolean) => (job: V1Job) => {
  indexJob(job, present);
  const key = backupJobKeyOfJob(job as unknown as KubeObject, lookupCronJob);
  if (key) queue.add(key);
};
jobs.on('add', onJob(true));
jobs.on('update', onJob(true));
jobs.on('delete', onJob(false));
for (const informer of [backupJobs, cronJobs, jobs]) {
  informer.on('error', (err) => log('informer error', { error: String(err) }));
}

const config = reconcilerConfig();

async function reconcileKey(key: string): Promise<Result> {
  const { namespace, name } = splitKey(key);
  const backupJob = backupJobs.get(name, namespace);
  const input = {
    backupJob,
    cronJob: cronJobs.get(cronJobName(name), namespace),
    jobs: [...(jobsByOwner.get(`${namespace}/${ownerLabelValue(name)}`)?.values() ?? [])],
    now: new Date(),
    config,
  };
  const { actions, result } = reconcile(input);
  await executor.run(actions, backupJob);
  return result;
}

async function worker(): Promise<void> {
  for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
    const finish = recorder.start();
    try {
      const result = await reconcileKey(key);
      if (result.kind === 'requeueAfter') {
        queue.forget(key);
        queue.addAfter(key, result.delayMs);
        finish('requeue_after');
      } else {
        queue.forget(key);
        finish(result.kind === 'terminal' ? 'error' : 'success', {
          terminal: result.kind === 'terminal',
        });
      }
    } catch (err) {
      queue.addRateLimited(key);
      finish('error');
      log('reconcile failed', { key, error: String(err) });
    } finally {
      queue.done(key);
    }
  }
}

let lastLog = 0;
function log(msg: string, fields: Record<string, unknown> = {}): void {
  // Errors under load (409s from a stale cache) would flood the output; one line a second is enough.
  if (msg === 'reconcile failed' && Date.now() - lastLog < 1000) return;
  lastLog = Date.now();
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), msg, ...fields })}\n`);
}

if (metricsPort > 0) await serveMetrics(metrics.registry, metricsPort, '127.0.0.1');
await Promise.all([cronJobs.start(), jobs.start()]);
await backupJobs.start();
log('informers synced', { backupJobs: backupJobs.list().length, concurrency });
const workers = Array.from({ length: concurrency }, () => worker());
const resync =
  resyncPeriodSeconds > 0
    ? setInterval(() => {
        // Its time is when the resync began: the process answers no scrape until the pass is over,
        // since reconciles that find nothing to do never wait on I/O.
        log('resync', { backupJobs: backupJobs.list().length });
        for (const bj of backupJobs.list()) queue.add(objectKey(bj as unknown as KubeObject));
      }, resyncPeriodSeconds * 1000)
    : undefined;
process.on('SIGTERM', () => {
  clearInterval(resync);
  queue.shutDown();
  void Promise.all(workers).then(() => process.exit(0));
});
