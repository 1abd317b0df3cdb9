import type { ObjectService } from '../objects.js';
import type { ResourceType } from '../resource-type.js';
import type { KubeObject } from '../types.js';
import { rfc3339, randomSuffix } from '../util.js';
import { controllerRef } from './owner-ref.js';
import { StoreController } from './queue.js';
import type { StoreChange } from '../store.js';

export type JobOutcome = 'succeed' | 'fail' | 'manual';

export interface JobSimulationOptions {
  /** What happens to a started Job without a programmatic decision. Default 'manual'. */
  outcome?: JobOutcome;
  /** Emulator-clock time a Job runs before an automatic outcome. Default 0. */
  durationMs?: number;
}

interface JobCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastProbeTime: string;
  lastTransitionTime: string;
}

const JOB_STORAGE = 'batch/jobs';

/**
 * The Job controller, simulated: each Job gets one Pod that runs until the test (or the automatic
 * outcome) decides; then Pod phase and Job status are written the way the real controller writes
 * them (succeeded/failed counts, SuccessCriteriaMet+Complete or FailureTarget+Failed, completionTime).
 */
export class JobSimulation extends StoreController {
  /** Running jobs ("ns/name") → emulator time of their automatic outcome. */
  private readonly due = new Map<string, number>();

  constructor(
    svc: ObjectService,
    private readonly opts: JobSimulationOptions = {},
  ) {
    super(svc);
  }

  protected observe({ storageKey, event }: StoreChange): void {
    if (storageKey !== JOB_STORAGE) return;
    const key = `${event.obj.metadata.namespace}/${event.obj.metadata.name}`;
    if (event.type === 'DELETED') this.due.delete(key);
    else if (!(event.obj.status as { startTime?: string } | undefined)?.startTime)
      this.queue.add(key);
  }

  protected sync(key: string): void {
    this.start(key);
  }

  private get jobs(): ResourceType {
    return this.builtin('batch', 'jobs');
  }

  private get pods(): ResourceType {
    return this.builtin('', 'pods');
  }

  /** Starts a new, unsuspended Job: status.startTime/active and its Pod. */
  private start(key: string): void {
    const [ns, name] = key.split('/') as [string, string];
    const job = this.svc.find(this.jobs, ns, name)?.obj;
    if (!job || job.metadata.deletionTimestamp || (job.spec as { suspend?: boolean }).suspend)
      return;
    if ((job.status as { startTime?: string } | undefined)?.startTime) return;
    const now = this.svc.clock.now();
    this.createPod(job);
    this.writeStatus(job, {
      startTime: rfc3339(now),
      active: 1,
      ready: 0,
      terminating: 0,
      uncountedTerminatedPods: {},
    });
    const outcome = this.opts.outcome ?? 'manual';
    if (outcome !== 'manual') this.due.set(key, now + (this.opts.durationMs ?? 0));
    this.tick();
  }

  private createPod(job: KubeObject): void {
    const template =
      (job.spec as { template?: { metadata?: KubeObject['metadata']; spec?: unknown } }).template ??
      {};
    const pod = this.svc.create(
      this.pods,
      job.metadata.namespace!,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${job.metadata.name}-${randomSuffix()}`,
          labels: template.metadata?.labels,
          annotations: template.metadata?.annotations,
          ownerReferences: [controllerRef(job)],
        },
        spec: template.spec ?? { containers: [] },
      },
      { fieldManager: 'job-controller' },
    );
    this.setPodPhase(pod.obj, 'Running');
  }

  private setPodPhase(pod: KubeObject, phase: 'Running' | 'Succeeded' | 'Failed'): void {
    const containers =
      (pod.spec as { containers?: { name: string; image?: string }[] }).containers ?? [];
    const now = rfc3339(this.svc.clock.now());
    const state =
      phase === 'Running'
        ? { running: { startedAt: now } }
        : {
            terminated: {
              exitCode: phase === 'Succeeded' ? 0 : 1,
              reason: phase === 'Succeeded' ? 'Completed' : 'Error',
              startedAt: now,
              finishedAt: now,
            },
          };
    const status = {
      phase,
      startTime: now,
      containerStatuses: containers.map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        ready: phase === 'Running',
        restartCount: 0,
        started: phase === 'Running',
        state,
      })),
    };
    this.svc.patch(
      this.pods,
      pod.metadata.namespace!,
      pod.metadata.name!,
      'application/merge-patch+json',
      { status },
      { subresource: 'status', fieldManager: 'kubelet' },
    );
  }

  private writeStatus(job: KubeObject, status: Record<string, unknown>): KubeObject {
    return this.svc.patch(
      this.jobs,
      job.metadata.namespace!,
      job.metadata.name!,
      'application/merge-patch+json',
      { status },
      { subresource: 'status', fieldManager: 'job-controller' },
    ).obj;
  }

  private podsOf(job: KubeObject): KubeObject[] {
    return [...this.svc.store.list(this.pods.storageKey, job.metadata.namespace)]
      .map((s) => s.obj)
      .filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === job.metadata.uid));
  }

  /** Finishes a running Job the way the real controller reports success or failure. */
  finish(
    namespace: string,
    name: string,
    outcome: 'succeed' | 'fail',
    reason?: string,
    message?: string,
  ): KubeObject {
    const job = this.svc.get(this.jobs, namespace, name).obj;
    if (!(job.status as { startTime?: string } | undefined)?.startTime)
      this.start(`${namespace}/${name}`);
    this.due.delete(`${namespace}/${name}`);
    for (const pod of this.podsOf(job))
      this.setPodPhase(pod, outcome === 'succeed' ? 'Succeeded' : 'Failed');
    const now = rfc3339(this.svc.clock.now());
    const cond = (type: string, r: string, m: string): JobCondition => ({
      type,
      status: 'True',
      reason: r,
      message: m,
      lastProbeTime: now,
      lastTransitionTime: now,
    });
    const current = this.svc.get(this.jobs, namespace, name).obj;
    if (outcome === 'succeed') {
      const m = 'Reached expected number of succeeded pods';
      return this.writeStatus(current, {
        active: null,
        ready: 0,
        terminating: 0,
        succeeded: 1,
        completionTime: now,
        conditions: [
          cond('SuccessCriteriaMet', 'CompletionsReached', m),
          cond('Complete', 'CompletionsReached', m),
        ],
      });
    }
    const backoffLimit = (job.spec as { backoffLimit?: number }).backoffLimit ?? 6;
    const r = reason ?? 'BackoffLimitExceeded';
    const m = message ?? 'Job has reached the specified backoff limit';
    return this.writeStatus(current, {
      active: null,
      ready: 0,
      terminating: 0,
      failed: backoffLimit + 1,
      conditions: [cond('FailureTarget', r, m), cond('Failed', r, m)],
    });
  }

  /** Applies automatic outcomes that are due by the emulator clock. */
  tick(): void {
    const now = this.svc.clock.now();
    for (const [key, at] of [...this.due]) {
      if (at > now) continue;
      this.due.delete(key);
      const [ns, name] = key.split('/') as [string, string];
      if (this.svc.find(this.jobs, ns, name))
        this.finish(ns, name, this.opts.outcome === 'fail' ? 'fail' : 'succeed');
    }
  }
}
