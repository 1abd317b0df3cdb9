import { CronExpressionParser } from 'cron-parser';
import type { ObjectClient } from '../client.js';
import type { KubeObject } from '../types.js';

/** The emulator controls the accelerator drives (an `Emulator` started with `controllers.cronJobs`). */
export interface ScheduleControls {
  readonly objects: ObjectClient;
  runCronJob(namespace: string, name: string): KubeObject;
}

export interface ScheduleAcceleratorOptions {
  /** How much faster than real time schedules come due (1440: a day per minute). */
  factor: number;
  /** A CronJob runs at most this often in real time, so a minutely schedule cannot flood. Default 2000. */
  minIntervalMs?: number;
  /** How often schedules are looked at. Default 250. */
  tickMs?: number;
  /** Real time source; tests pass their own. */
  now?: () => number;
}

interface CronJobSpec {
  schedule: string;
  timeZone?: string;
  suspend?: boolean;
}

/** Whether a schedule time falls in (from, to]; false for a schedule cron cannot read. */
function dueBetween(spec: CronJobSpec, from: number, to: number): boolean {
  try {
    const next = CronExpressionParser.parse(spec.schedule, {
      currentDate: new Date(from),
      tz: spec.timeZone ?? 'UTC',
    }).next();
    return next.getTime() <= to;
  } catch {
    return false;
  }
}

/**
 * Runs CronJobs as if their schedules ran `factor` times faster, while every timestamp the
 * emulator writes stays real: a daily backup happens every minute, and `kubectl get` still shows
 * sensible ages and last-backup times. Accelerating the emulator clock itself would move every
 * timestamp into the future instead. Start the emulator with `cronJobs: { schedule: false }` so
 * that only this drives the schedules.
 */
export class ScheduleAccelerator {
  private readonly now: () => number;
  private readonly realStart: number;
  private lastVirtual: number;
  private readonly lastRun = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly emulator: ScheduleControls,
    private readonly opts: ScheduleAcceleratorOptions,
  ) {
    if (!(opts.factor >= 1))
      throw new RangeError(`schedule factor must be ≥ 1, got ${opts.factor}`);
    this.now = opts.now ?? Date.now;
    this.realStart = this.now();
    this.lastVirtual = this.realStart;
    this.timer = setInterval(() => this.tick(), opts.tickMs ?? 250);
    this.timer.unref();
  }

  /** The accelerated time the schedules are read on. */
  virtualNow(): number {
    return this.realStart + (this.now() - this.realStart) * this.opts.factor;
  }

  /** Runs every CronJob with a schedule time since the previous tick (once, however many). */
  tick(): void {
    const from = this.lastVirtual;
    const to = this.virtualNow();
    this.lastVirtual = to;
    const cronJobs = this.emulator.objects.list('batch/v1', 'CronJob');
    const keys = cronJobs.map((cj) => `${cj.metadata.namespace}/${cj.metadata.name}`);
    for (const key of this.lastRun.keys()) if (!keys.includes(key)) this.lastRun.delete(key);
    for (const [i, cj] of cronJobs.entries()) {
      const spec = cj.spec as CronJobSpec;
      if (spec.suspend || cj.metadata.deletionTimestamp || !dueBetween(spec, from, to)) continue;
      const key = keys[i]!;
      const real = this.now();
      if (real - (this.lastRun.get(key) ?? -Infinity) < (this.opts.minIntervalMs ?? 2000)) continue;
      this.lastRun.set(key, real);
      try {
        this.emulator.runCronJob(cj.metadata.namespace!, cj.metadata.name!);
      } catch {
        // Deleted between the list and the run: nothing to run.
      }
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
