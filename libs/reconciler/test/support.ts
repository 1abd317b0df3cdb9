import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import { API_VERSION, FINALIZER, KIND, type BackupJob } from '#api';
import type { Action } from '../src/actions.js';
import { reconcilerConfig } from '../src/config.js';
import { desiredCronJob } from '../src/desired.js';
import { reconcile } from '../src/reconcile.js';
import type { ReconcileInput, ReconcileOutput } from '../src/world.js';
import { effectiveSpec } from '../src/spec.js';

export const config = reconcilerConfig({
  defaultImage: 'registry.example.com/backup:1.0',
  allowedImages: ['registry.example.com/custom'],
});
export const T0 = new Date('2026-05-29T00:00:00Z');

export function minutes(n: number, from = T0): Date {
  return new Date(from.getTime() + n * 60_000);
}

export function backupJob(
  overrides: { spec?: Partial<BackupJob['spec']>; metadata?: Partial<BackupJob['metadata']> } = {},
): BackupJob {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      name: 'mysql-daily',
      namespace: 'ops',
      uid: 'uid-bj-1',
      generation: 1,
      resourceVersion: '10',
      creationTimestamp: T0,
      finalizers: [FINALIZER],
      ...overrides.metadata,
    },
    spec: {
      target: 'mysql',
      schedule: '10 2 * * *',
      retentionDays: 7,
      suspend: false,
      deletionPolicy: 'Retain',
      ...overrides.spec,
    },
  };
}

/**
 * What the API server hands back for a created CronJob: the object with defaults filled in
 * (imagePullPolicy, terminationMessagePath, dnsPolicy …), quantities canonicalized and a uid.
 */
function asStored(cronJob: V1CronJob): V1CronJob {
  const stored = structuredClone(cronJob);
  stored.metadata = { ...stored.metadata, uid: 'uid-cj-1', resourceVersion: '20', generation: 1 };
  const pod = stored.spec?.jobTemplate.spec?.template.spec;
  if (pod) {
    pod.dnsPolicy = 'ClusterFirst';
    pod.schedulerName = 'default-scheduler';
    pod.terminationGracePeriodSeconds = 30;
    for (const c of pod.containers) {
      c.imagePullPolicy = 'IfNotPresent';
      c.terminationMessagePath = '/dev/termination-log';
      c.terminationMessagePolicy = 'File';
      if (c.resources?.limits?.cpu === '1') c.resources.limits.cpu = '1000m';
      for (const m of c.volumeMounts ?? []) if (m.readOnly === false) delete m.readOnly;
    }
    for (const v of pod.volumes ?? []) if (v.emptyDir) v.emptyDir = { sizeLimit: undefined };
  }
  if (stored.spec) stored.spec.jobTemplate.spec!.completionMode = 'NonIndexed';
  return stored;
}

export function storedCronJobFor(bj: BackupJob): V1CronJob {
  return asStored(desiredCronJob(bj, effectiveSpec(bj, config), config));
}

export function job(
  name: string,
  state: 'active' | 'succeeded' | 'failed',
  finishedAt?: Date,
  extra: { labels?: Record<string, string>; reason?: string; message?: string; uid?: string } = {},
): V1Job {
  const labels = {
    'app.kubernetes.io/managed-by': 'backupjob-operator',
    'backup.ops.example.com/backupjob': 'mysql-daily',
    'app.kubernetes.io/component': 'backup',
    ...extra.labels,
  };
  const conditions =
    state === 'active'
      ? []
      : [
          {
            type: state === 'succeeded' ? 'Complete' : 'Failed',
            status: 'True',
            reason: extra.reason ?? (state === 'failed' ? 'BackoffLimitExceeded' : undefined),
            message:
              extra.message ??
              (state === 'failed' ? 'Job has reached the specified backoff limit' : undefined),
            lastTransitionTime: finishedAt,
          },
        ];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'ops', uid: extra.uid ?? `uid-${name}`, labels },
    status: {
      startTime: finishedAt ? minutes(-1, finishedAt) : T0,
      completionTime: state === 'succeeded' ? finishedAt : undefined,
      conditions,
    },
  };
}

export function cleanupJob(
  attempt: number,
  state: 'active' | 'succeeded' | 'failed',
  finishedAt?: Date,
): V1Job {
  return job(`mysql-daily-cleanup-${attempt}`, state, finishedAt, {
    labels: {
      'app.kubernetes.io/component': 'cleanup',
      'backup.ops.example.com/cleanup-attempt': String(attempt),
    },
    reason: 'DeadlineExceeded',
    message: 'Job was active longer than specified deadline',
  });
}

export function run(partial: Partial<ReconcileInput>): ReconcileOutput {
  return reconcile({
    backupJob: undefined,
    cronJob: undefined,
    jobs: [],
    now: T0,
    config,
    ...partial,
  });
}

export function types(actions: readonly Action[]): string[] {
  return actions.map((a) => (a.type === 'emitEvent' ? `event:${a.event.reason}` : a.type));
}

/** The world after the controller carried out `actions`, as far as the reconciler can see it. */
export function applyActions(input: ReconcileInput, actions: readonly Action[]): ReconcileInput {
  let { backupJob: bj, cronJob, jobs } = input;
  for (const action of actions) {
    if (!bj) break;
    switch (action.type) {
      case 'addFinalizer':
        bj = {
          ...bj,
          metadata: { ...bj.metadata, finalizers: [...(bj.metadata.finalizers ?? []), FINALIZER] },
        };
        break;
      case 'removeFinalizer':
        bj = {
          ...bj,
          metadata: {
            ...bj.metadata,
            finalizers: bj.metadata.finalizers?.filter((f) => f !== FINALIZER),
          },
        };
        break;
      case 'createCronJob':
        cronJob = asStored(action.cronJob);
        break;
      case 'patchCronJob':
        cronJob = mergePatch(cronJob, action.patch) as V1CronJob;
        break;
      case 'deleteCronJob':
        cronJob = undefined;
        break;
      case 'createJob':
        jobs = [
          ...jobs,
          {
            ...action.job,
            metadata: { ...action.job.metadata, uid: `uid-${action.job.metadata?.name}` },
          },
        ];
        break;
      case 'deleteJob':
        jobs = jobs.filter((j) => j.metadata?.uid !== action.uid);
        break;
      case 'updateStatus':
        bj = { ...bj, status: structuredClone(action.status) };
        break;
      case 'emitEvent':
        break;
    }
  }
  return { ...input, backupJob: bj, cronJob, jobs };
}

/** RFC 7386 JSON merge patch, as the API server applies it. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
    return structuredClone(patch);
  const base =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? target : {};
  const result: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
