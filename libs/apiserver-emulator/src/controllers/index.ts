import type { EmulatorCore } from '../core.js';
import { CronJobSimulation, type CronJobSimulationOptions } from './cronjobs.js';
import { DeploymentController } from './deployments.js';
import { GarbageCollector } from './garbage-collector.js';
import { JobSimulation, type JobSimulationOptions } from './jobs.js';
import { NamespaceLifecycle } from './namespace-lifecycle.js';

export interface ControllerOptions {
  /** ownerReference garbage collection. Default true. */
  garbageCollector?: boolean;
  /** Terminating namespaces lose their content, then go away. Default true. */
  namespaceLifecycle?: boolean;
  /** Deployment → ReplicaSet rollouts with every replica available at once. Default true. */
  deployments?: boolean;
  /** Job → Pod simulation with controllable outcomes. Default off. */
  jobs?: boolean | JobSimulationOptions;
  /** CronJob → Job simulation on the emulator clock. Default off. */
  cronJobs?: boolean | CronJobSimulationOptions;
}

/** How often time-driven controllers look at the clock when it runs by itself. */
const TICK_MS = 25;

export class Controllers {
  readonly jobs: JobSimulation | undefined;
  readonly cronJobs: CronJobSimulation | undefined;
  private readonly running: { stop(): void }[] = [];
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly unsubscribeClock: () => void;

  constructor(core: EmulatorCore, opts: ControllerOptions = {}) {
    if (opts.garbageCollector ?? true) this.running.push(new GarbageCollector(core.svc));
    if (opts.namespaceLifecycle ?? true) this.running.push(new NamespaceLifecycle(core.svc));
    if (opts.deployments ?? true) this.running.push(new DeploymentController(core.svc));
    if (opts.jobs) this.jobs = new JobSimulation(core.svc, opts.jobs === true ? {} : opts.jobs);
    if (opts.cronJobs)
      this.cronJobs = new CronJobSimulation(core.svc, opts.cronJobs === true ? {} : opts.cronJobs);
    for (const c of [this.jobs, this.cronJobs]) if (c) this.running.push(c);
    this.unsubscribeClock = core.clock.onChange(() => this.tick());
    if (this.jobs || this.cronJobs) {
      this.timer = setInterval(() => this.tick(), TICK_MS);
      this.timer.unref();
    }
  }

  /** Runs time-driven work now (also done on every clock change and periodically). */
  tick(): void {
    this.cronJobs?.tick();
    this.jobs?.tick();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.unsubscribeClock();
    for (const c of this.running) c.stop();
  }
}
