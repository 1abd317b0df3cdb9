import { CronExpressionParser } from 'cron-parser';
import type { ObjectService } from '../objects.js';
import type { ResourceType } from '../resource-type.js';
import type { KubeObject } from '../types.js';
import { randomSuffix, rfc3339 } from '../util.js';
import { controllerRef } from './owner-ref.js';
import { StoreController } from './queue.js';
import type { StoreChange } from '../store.js';

export interface CronJobSimulationOptions {
  /** Fire CronJobs when their schedule comes due on the emulator clock. Default true. */
  schedule?: boolean;
}

interface CronJobSpec {
  schedule: string;
  timeZone?: string;
  suspend?: boolean;
  concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace';
  startingDeadlineSeconds?: number;
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
  jobTemplate?: { metadata?: KubeObject['metadata']; spec?: unknown };
}

interface ActiveRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
  resourceVersion?: string;
}

interface CronJobStatus {
  active?: ActiveRef[];
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
}

const SCHEDULED_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

const CRONJOBS = 'batch/cronjobs';

const keyOf = (obj: KubeObject) => `${obj.metadata.namespace}/${obj.metadata.name}`;

function finished(job: KubeObject): 'Complete' | 'Failed' | undefined {
  const conds =
    (job.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ??
    [];
  if (conds.some((c) => c.type === 'Complete' && c.status === 'True')) return 'Complete';
  if (conds.some((c) => c.type === 'Failed' && c.status === 'True')) return 'Failed';
  return undefined;
}

/** The first schedule time after `since`, in the CronJob's time zone. */
function nextScheduleTime(spec: CronJobSpec, since: number): number | undefined {
  try {
    return CronExpressionParser.parse(spec.schedule, {
      currentDate: new Date(since),
      tz: spec.timeZone ?? 'UTC',
    })
      .next()
      .getTime();
  } catch {
    return undefined;
  }
}

/**
 * CronJobs by the time their schedule next comes due. Cron schedules have whole minutes, so keys
 * are grouped by minute, and the minutes are kept sorted: a tick takes the groups that are due
 * and looks at nothing else, however many CronJobs wait.
 */
class DueTimes {
  private readonly dueAt = new Map<string, number>();
  private readonly byMinute = new Map<number, Set<string>>();
  /** The minutes of byMinute, ascending. */
  private readonly minutes: number[] = [];

  set(key: string, at: number | undefined): void {
    const minute = at === undefined ? undefined : Math.floor(at / 60_000);
    const current = this.dueAt.get(key);
    if (current === minute) return;
    if (current !== undefined) {
      const keys = this.byMinute.get(current)!;
      keys.delete(key);
      if (keys.size === 0) {
        this.byMinute.delete(current);
        this.minutes.splice(this.indexOf(current), 1);
      }
    }
    if (minute === undefined) {
      this.dueAt.delete(key);
      return;
    }
    this.dueAt.set(key, minute);
    let keys = this.byMinute.get(minute);
    if (!keys) {
      this.byMinute.set(minute, (keys = new Set()));
      this.minutes.splice(this.indexOf(minute), 0, minute);
    }
    keys.add(key);
  }

  /** Removes and returns the keys due at or before `now`. */
  takeDue(now: number): string[] {
    const due: string[] = [];
    const last = Math.floor(now / 60_000);
    while (this.minutes.length > 0 && this.minutes[0]! <= last) {
      const minute = this.minutes.shift()!;
      for (const key of this.byMinute.get(minute)!) {
        due.push(key);
        this.dueAt.delete(key);
      }
      this.byMinute.delete(minute);
    }
    return due;
  }

  /** Where `minute` is in `minutes`, or would be inserted. */
  private indexOf(minute: number): number {
    let lo = 0;
    let hi = this.minutes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.minutes[mid]! < minute) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The most recent schedule time at or before `now`, in the CronJob's time zone. */
function latestScheduleTime(spec: CronJobSpec, now: number): number | undefined {
  try {
    const expr = CronExpressionParser.parse(spec.schedule, {
      currentDate: new Date(now + 1000),
      tz: spec.timeZone ?? 'UTC',
    });
    return expr.prev().getTime();
  } catch {
    return undefined;
  }
}

/**
 * The CronJob controller, simulated on the emulator clock: creates a Job per due schedule time
 * (named `<cronjob>-<minutes since epoch>`, owned by the CronJob), keeps status.active,
 * lastScheduleTime and lastSuccessfulTime, honours suspend, concurrencyPolicy,
 * startingDeadlineSeconds and the history limits. Every change of a CronJob sets when it is next
 * due; a tick looks only at the CronJobs due by then.
 */
export class CronJobSimulation extends StoreController {
  private readonly due = new DueTimes();
  private looked = 0;

  constructor(
    svc: ObjectService,
    private readonly opts: CronJobSimulationOptions = {},
  ) {
    super(svc);
    for (const s of this.svc.store.list(CRONJOBS)) this.schedule(s.obj);
  }

  /** CronJobs the ticks have looked at since the start: the work they do, whatever else exists. */
  get examined(): number {
    return this.looked;
  }

  protected observe({ storageKey, event }: StoreChange): void {
    if (storageKey === CRONJOBS) {
      if (event.type === 'DELETED') this.due.set(keyOf(event.obj), undefined);
      else this.schedule(event.obj);
      return;
    }
    if (storageKey !== 'batch/jobs') return;
    const owner = event.obj.metadata.ownerReferences?.find(
      (r) => r.kind === 'CronJob' && r.controller,
    );
    if (!owner) return;
    const key = `${event.obj.metadata.namespace}/${owner.name}`;
    if (event.type === 'DELETED') {
      // A Forbid CronJob waits for its active Job; gone, it may run what came due meanwhile.
      const cj = this.find(key);
      if (cj) this.schedule(cj);
    } else if (finished(event.obj)) this.queue.add(key);
  }

  /** When `cj` next comes due: the first schedule time after its last run (or its creation). */
  private schedule(cj: KubeObject): void {
    const spec = cj.spec as CronJobSpec;
    if (this.opts.schedule === false || spec.suspend || cj.metadata.deletionTimestamp) {
      this.due.set(keyOf(cj), undefined);
      return;
    }
    const status = (cj.status ?? {}) as CronJobStatus;
    const since = Date.parse(status.lastScheduleTime ?? cj.metadata.creationTimestamp!);
    this.due.set(keyOf(cj), nextScheduleTime(spec, since));
  }

  private find(key: string): KubeObject | undefined {
    const [ns, name] = key.split('/') as [string, string];
    return this.svc.find(this.cronJobs, ns, name)?.obj;
  }

  private get cronJobs(): ResourceType {
    return this.builtin('batch', 'cronjobs');
  }

  private get jobs(): ResourceType {
    return this.builtin('batch', 'jobs');
  }

  /** Fires every CronJob whose schedule came due since its last run. */
  tick(): void {
    if (this.opts.schedule === false) return;
    const now = this.svc.clock.now();
    for (const key of this.due.takeDue(now)) {
      this.looked++;
      const cj = this.find(key);
      if (!cj) continue;
      const spec = cj.spec as CronJobSpec;
      const due = latestScheduleTime(spec, now);
      const status = (cj.status ?? {}) as CronJobStatus;
      const since = Date.parse(status.lastScheduleTime ?? cj.metadata.creationTimestamp!);
      if (due === undefined || due <= since) {
        // The clock went back: due again once it passes the next schedule time.
        this.schedule(cj);
        continue;
      }
      const missedDeadline =
        spec.startingDeadlineSeconds !== undefined &&
        now - due > spec.startingDeadlineSeconds * 1000;
      // A run writes lastScheduleTime, and the change reschedules the CronJob.
      const ran = !missedDeadline && this.run(cj, due, false) !== undefined;
      if (ran || this.waitsForActiveJob(cj)) continue;
      // Skipped (too late, or this time's Job exists already): due at the schedule time after.
      this.due.set(key, nextScheduleTime(spec, due));
    }
  }

  /** A Forbid CronJob with a Job still running: the Job's end (or deletion) reschedules it. */
  private waitsForActiveJob(cj: KubeObject): boolean {
    const spec = cj.spec as CronJobSpec;
    const active = ((cj.status ?? {}) as CronJobStatus).active ?? [];
    return (
      spec.concurrencyPolicy === 'Forbid' &&
      active.some((a) => this.svc.find(this.jobs, cj.metadata.namespace!, a.name))
    );
  }

  /** Starts a Job of the CronJob now, as if its schedule had fired (`kubectl create job --from` with status). */
  runNow(namespace: string, name: string): KubeObject {
    const cj = this.svc.get(this.cronJobs, namespace, name).obj;
    return this.run(cj, this.svc.clock.now(), true)!;
  }

  private run(cj: KubeObject, scheduled: number, force: boolean): KubeObject | undefined {
    const spec = cj.spec as CronJobSpec;
    const ns = cj.metadata.namespace!;
    const status = (cj.status ?? {}) as CronJobStatus;
    const active = (status.active ?? []).filter((a) => this.svc.find(this.jobs, ns, a.name));
    if (!force && spec.concurrencyPolicy === 'Forbid' && active.length > 0) return undefined;
    if (spec.concurrencyPolicy === 'Replace') {
      for (const a of active)
        this.svc.delete(this.jobs, ns, a.name, { propagationPolicy: 'Background' });
      active.length = 0;
    }
    let name = `${cj.metadata.name}-${Math.floor(scheduled / 60000)}`;
    if (this.svc.find(this.jobs, ns, name)) {
      if (!force) return undefined;
      name = `${name}-${randomSuffix()}`;
    }
    const template = spec.jobTemplate ?? {};
    const job = this.svc.create(
      this.jobs,
      ns,
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          name,
          labels: template.metadata?.labels,
          annotations: {
            ...template.metadata?.annotations,
            [SCHEDULED_ANNOTATION]: rfc3339(scheduled),
          },
          ownerReferences: [controllerRef(cj)],
        },
        spec: template.spec ?? {},
      },
      { fieldManager: 'cronjob-controller' },
    ).obj;
    const ref: ActiveRef = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      name,
      namespace: ns,
      uid: job.metadata.uid!,
      resourceVersion: job.metadata.resourceVersion,
    };
    this.writeStatus(ns, cj.metadata.name!, {
      active: [...active, ref],
      lastScheduleTime: rfc3339(scheduled),
    });
    return job;
  }

  private writeStatus(ns: string, name: string, status: Record<string, unknown>): void {
    this.svc.patch(
      this.cronJobs,
      ns,
      name,
      'application/merge-patch+json',
      { status },
      { subresource: 'status', fieldManager: 'cronjob-controller' },
    );
  }

  /** A Job of this CronJob finished: leave the active list, record success, trim history. */
  protected sync(key: string): void {
    const [ns, name] = key.split('/') as [string, string];
    const cj = this.svc.find(this.cronJobs, ns, name)?.obj;
    if (!cj) return;
    const owned = [...this.svc.store.list(this.jobs.storageKey, ns)]
      .map((s) => s.obj)
      .filter((j) => j.metadata.ownerReferences?.some((r) => r.uid === cj.metadata.uid));
    const status = (cj.status ?? {}) as CronJobStatus;
    const active = (status.active ?? []).filter((a) => {
      const j = owned.find((o) => o.metadata.uid === a.uid);
      return j && !finished(j);
    });
    const completions = owned
      .filter((j) => finished(j) === 'Complete')
      .map((j) => (j.status as { completionTime?: string }).completionTime ?? '')
      .sort();
    const lastSuccess = completions[completions.length - 1];
    const next: Record<string, unknown> = { active: active.length ? active : null };
    if (lastSuccess && (!status.lastSuccessfulTime || lastSuccess > status.lastSuccessfulTime))
      next.lastSuccessfulTime = lastSuccess;
    this.writeStatus(ns, name, next);
    const spec = cj.spec as CronJobSpec;
    this.trim(owned, 'Complete', spec.successfulJobsHistoryLimit ?? 3, ns);
    this.trim(owned, 'Failed', spec.failedJobsHistoryLimit ?? 1, ns);
  }

  private trim(owned: KubeObject[], kind: 'Complete' | 'Failed', limit: number, ns: string): void {
    const order = (j: KubeObject) =>
      `${j.metadata.annotations?.[SCHEDULED_ANNOTATION] ?? ''} ${j.metadata.creationTimestamp} ${j.metadata.name}`;
    const done = owned
      .filter((j) => finished(j) === kind)
      .sort((a, b) => (order(a) < order(b) ? -1 : 1));
    for (const j of done.slice(0, Math.max(0, done.length - limit))) {
      this.svc.delete(this.jobs, ns, j.metadata.name!, { propagationPolicy: 'Background' });
    }
  }
}
