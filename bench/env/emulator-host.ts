/**
 * The API server emulator in a process of its own, driven over IPC by the bench runner, so its
 * CPU is measured apart from the operator's and the runner's bookkeeping never stalls it. It also
 * generates the load in-process (creates, spec changes) and times the operator's writes with a
 * Tracker as they are stored.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_VERSION, backupJobCrd, FINALIZER, KIND, type BackupJob } from '#api';
import { start, type KubeObject } from '#apiserver-emulator';
import { cronJobName, reconcile, reconcilerConfig, referencedObjects } from '#reconciler';
import { jobStatus } from '#testing';
import { Tracker, type TrackedBackupJob } from './tracker.js';
import type { HostRequest, HostResponse, Ops } from './emulator-protocol.js';

const NAMESPACE = 'bench';

const dir = mkdtempSync(join(tmpdir(), 'bench-emulator-'));
const kubeconfigPath = join(dir, 'kubeconfig');
const emu = await start({
  port: 0,
  tls: process.argv.includes('--tls'),
  kubeconfigPath,
  namespaces: [NAMESPACE],
  // A real API server's watch cache holds minutes of history; a 10k-object cold start makes more
  // events than the default window, and a relist would then be measured instead of the operator.
  watchCacheSize: 500_000,
  requestLogSize: 1000,
});
emu.objects.create(backupJobCrd() as unknown as KubeObject);

const tracker = new Tracker();
emu.core.store.onChange(({ storageKey, event }) => {
  if (storageKey === 'ops.example.com/backupjobs') {
    tracker.onBackupJob(event.type, event.obj as unknown as TrackedBackupJob);
  } else if (storageKey === 'batch/cronjobs') {
    const owner = event.obj.metadata.ownerReferences?.find((r) => r.controller && r.kind === KIND);
    tracker.onCronJob(
      event.type,
      owner ? `${event.obj.metadata.namespace}/${owner.name}` : undefined,
    );
  }
});

function backupJob(name: string, i: number, secretRef = false): KubeObject {
  const spec = { target: `db-${i % 97}`, schedule: `${i % 60} ${i % 24} * * *`, retentionDays: 7 };
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace: NAMESPACE },
    spec: secretRef ? { ...spec, secretRef: { name: `${name}-credentials` } } : spec,
  };
}

type StoredBackupJob = BackupJob & KubeObject;
const config = reconcilerConfig();

/**
 * Runs the reconciler in-process until the object needs nothing: what a converged operator
 * leaves. It carries the objects each write returns instead of reading them again.
 */
function converge(created: KubeObject): void {
  let bj = created as StoredBackupJob;
  const name = bj.metadata.name as string;
  // The bench's operator runs as an admin, so every reference it asks about is granted.
  const grants = referencedObjects(bj.spec).map((ref) => ({ ...ref, allowed: true }));
  let cronJob: KubeObject | undefined;
  for (let round = 0; round < 5; round++) {
    const out = reconcile({
      backupJob: bj,
      cronJob: cronJob as never,
      jobs: [],
      grants,
      now: new Date(),
      config,
    });
    const writes = out.actions.filter((a) => a.type !== 'emitEvent');
    if (writes.length === 0) return;
    for (const action of writes) {
      if (action.type === 'addFinalizer') {
        const finalizers = [...(bj.metadata.finalizers ?? []), FINALIZER];
        bj = emu.objects.patch(API_VERSION, KIND, name, NAMESPACE, { metadata: { finalizers } });
      } else if (action.type === 'createCronJob') {
        cronJob = emu.objects.create({
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          ...action.cronJob,
        } as unknown as KubeObject);
      } else if (action.type === 'updateStatus') {
        bj = emu.objects.patch(
          API_VERSION,
          KIND,
          name,
          NAMESPACE,
          { status: action.status },
          'status',
        );
      } else throw new Error(`seeding cannot apply ${action.type}`);
    }
  }
  throw new Error(`seeded ${name} did not converge`);
}

/**
 * `count` finished Jobs of a converged BackupJob's CronJob, as the CronJob controller leaves them:
 * the template's labels and annotations, the CronJob as controller, a Complete condition.
 */
function finishedJobs(backupJobName: string, count: number): void {
  const cronJob = emu.objects.get<
    KubeObject & { spec: { jobTemplate: { metadata?: object; spec?: object } } }
  >('batch/v1', 'CronJob', cronJobName(backupJobName), NAMESPACE);
  if (!cronJob) throw new Error(`seeded ${backupJobName} has no CronJob`);
  for (let k = 0; k < count; k++) {
    const finished = new Date(Date.now() - (k + 1) * 86_400_000);
    const job = emu.objects.create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        ...cronJob.spec.jobTemplate.metadata,
        name: `${cronJob.metadata.name}-${29_000_000 + k}`,
        namespace: NAMESPACE,
        ownerReferences: [
          {
            apiVersion: 'batch/v1',
            kind: 'CronJob',
            name: cronJob.metadata.name as string,
            uid: cronJob.metadata.uid as string,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: cronJob.spec.jobTemplate.spec,
    } as unknown as KubeObject);
    emu.objects.update(
      { ...job, status: jobStatus('succeeded', finished) } as KubeObject,
      'status',
    );
  }
}

const churnTimers = new Set<NodeJS.Timeout>();

/** A spec change that always changes something, so every one bumps the generation. */
function changeSpec(name: string): KubeObject {
  const current = emu.objects.get<BackupJob & KubeObject>(API_VERSION, KIND, name, NAMESPACE);
  const retentionDays = ((current?.spec.retentionDays ?? 7) % 3650) + 1;
  return emu.objects.patch(API_VERSION, KIND, name, NAMESPACE, { spec: { retentionDays } });
}

const ops: Ops = {
  info: () => ({ url: emu.url, kubeconfigPath, pid: process.pid }),
  setLatency: ({ ms, jitterMs }) => {
    emu.core.faults.clear();
    if (ms > 0 || jitterMs > 0) emu.core.faults.addLatency({ fixedMs: ms, jitterMs });
  },
  create: ({ prefix, from, count, converged, jobs, secretRef }) => {
    const t0 = Date.now();
    for (let i = from; i < from + count; i++) {
      const name = `${prefix}-${i}`;
      const created = emu.objects.create(backupJob(name, i, secretRef));
      if (converged) converge(created);
      if (converged && jobs) finishedJobs(name, jobs);
    }
    return { at: t0 };
  },
  progress: () => tracker.counts(),
  burst: ({ since }) => tracker.burstLatencies(since),
  changeLatencies: () => tracker.takeChangeLatencies(),
  /** Spec changes at `rate` per second for `durationMs`, each to a random one of `names`. */
  churn: ({ prefix, count, rate, durationMs }) =>
    new Promise((resolve) => {
      const t0 = Date.now();
      let sent = 0;
      const timer = setInterval(() => {
        const elapsed = Date.now() - t0;
        const due = Math.floor((Math.min(elapsed, durationMs) * rate) / 1000);
        for (; sent < due; sent++) {
          const name = `${prefix}-${Math.floor(Math.random() * count)}`;
          const obj = changeSpec(name);
          tracker.specChanged(`${NAMESPACE}/${name}`, obj.metadata.generation ?? 0);
        }
        if (elapsed >= durationMs) {
          clearInterval(timer);
          churnTimers.delete(timer);
          resolve({ sent, seconds: elapsed / 1000 });
        }
      }, 5);
      churnTimers.add(timer);
    }),
  /** Many updates of one object within `windowMs`. */
  hammer: ({ name, updates, windowMs }) =>
    new Promise((resolve) => {
      let i = 0;
      const t0 = Date.now();
      const step = windowMs / updates;
      // Scheduled from the start, not from the previous tick, so timer drift does not stretch the window.
      const tick = () => {
        changeSpec(name);
        if (++i < updates) setTimeout(tick, Math.max(0, t0 + i * step - Date.now()));
        else resolve({ updates: i });
      };
      tick();
    }),
  requests: () => emu.core.log.summary(),
  stop: async () => {
    for (const t of churnTimers) clearInterval(t);
    await emu.stop();
  },
};

process.on('message', (msg: HostRequest) => {
  void (async () => {
    let reply: HostResponse;
    try {
      const fn = ops[msg.op] as (args: unknown) => unknown;
      reply = { id: msg.id, result: await fn(msg.args) };
    } catch (err) {
      reply = {
        id: msg.id,
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      };
    }
    process.send?.(reply);
    if (msg.op === 'stop') process.disconnect();
  })();
});
// The runner is gone (killed or crashed): nobody will stop this emulator, so it stops itself.
process.on('disconnect', () => process.exit(0));
process.send?.({ id: 0, result: 'ready' } satisfies HostResponse);
