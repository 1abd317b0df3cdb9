import { API_VERSION, KIND } from '#api';
import type { KubeObject } from '#apiserver-emulator';
import {
  lastStarts,
  type ManagedProcess,
  reconcileRuns,
  startOperatorSystem,
  untilWorking,
  waitFor,
} from '#testing';
import { USERS } from '../e2e/support.js';
import { FAULT_ENV } from '../faults/support/system.js';
import { Churn } from './churn.js';
import { selectFaults, type FaultContext } from './faults.js';
import {
  checkConverged,
  checkNoLostUpdate,
  checkNoOrphans,
  checkNoOverlap,
  checkWritesGuarded,
  type ClusterView,
  type Violation,
} from './invariants.js';
import type { SoakOptions } from './options.js';
import { describeViolation } from './report.js';
import { Rng } from './rng.js';
import { Supervisor } from './supervisor.js';

const NAMESPACE = 'soak';
const LEASE_DURATION_MS = 6000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface SoakResult {
  readonly faults: number;
  readonly violations: readonly Violation[];
}

/** Runs one soak: converge, churn under faults, stop the faults, check every invariant. */
export async function runSoak(
  options: SoakOptions,
  print: (line: string) => void,
): Promise<SoakResult> {
  const rng = new Rng(options.seed);
  const faults = selectFaults(options.faults, options.redis);
  const sys = await startOperatorSystem({
    watchers: options.watchers,
    workers: options.workers,
    redisMode: options.redis,
    // Resyncs all through the churn and the faults: the keys they skip as proven converged are
    // held to the same invariants as every other.
    env: { ...FAULT_ENV, RESYNC_PERIOD: '5s' },
    emulator: { namespaces: [NAMESPACE], requestLogSize: 1_000_000 },
  });
  const supervisor = new Supervisor(sys);
  const stopped = new Set<ManagedProcess>();
  try {
    await untilWorking(sys);
    const t0 = Date.now();
    const at = () => `+${((Date.now() - t0) / 1000).toFixed(1)}s`;
    const churn = new Churn(sys, NAMESPACE, rng);
    churn.create(options.backupJobs);
    const view = (): ClusterView => ({
      backupJobs: sys.emulator.objects.list(API_VERSION, KIND, NAMESPACE),
      cronJobs: sys.emulator.objects.list('batch/v1', 'CronJob', NAMESPACE) as KubeObject[],
    });
    const eventual = () => {
      const now = view();
      const wrong = [...checkConverged(now, churn.deleted), ...checkNoOrphans(now)];
      if (wrong.length > 0) return wrong;
      // Only once the objects are right: reading every worker's log is the costly part.
      const starts = lastStarts(reconcileRuns(supervisor.allWorkers, supervisor.killedAt));
      const live = churn.names.filter((n) => !churn.deleted.includes(n));
      return checkNoLostUpdate(live, (n) => churn.lastChange(n), starts, NAMESPACE);
    };
    if (!(await until(() => eventual().length === 0, options.convergeWithinMs))) {
      throw new Error(
        `the first ${options.backupJobs} BackupJobs did not converge before any fault`,
      );
    }
    print(
      `${at()} ${options.backupJobs} BackupJobs converged; churn and faults for ${options.durationMs / 1000} s`,
    );

    const ctx: FaultContext = { sys, rng, supervisor, leaseDurationMs: LEASE_DURATION_MS, stopped };
    const mark = sys.emulator.log.mark();
    const end = Date.now() + options.durationMs;
    let injected = 0;
    const inFlight = new Set<Promise<void>>();
    const churning = (async () => {
      while (Date.now() < end) {
        churn.step();
        await sleep(rng.between(50, 300));
      }
    })();
    while (Date.now() < end) {
      const fault = rng.pick(faults);
      const started = at();
      const run = fault.inject(ctx).then(
        (what) => {
          if (what === undefined) return;
          injected++;
          print(`${started} ${fault.name}: ${what}`);
        },
        (err: unknown) => print(`${started} ${fault.name} could not be injected: ${String(err)}`),
      );
      inFlight.add(run);
      void run.finally(() => inFlight.delete(run));
      await sleep(rng.between(1000, 4000));
    }
    await churning;
    await churn.settled();
    await Promise.all([...inFlight]);
    sys.emulator.faults.clear();
    for (const proc of stopped) proc.child.kill('SIGCONT');
    print(
      `${at()} faults over (${injected}); every BackupJob must be right within ${options.convergeWithinMs / 1000} s`,
    );

    const converged = await until(() => eventual().length === 0, options.convergeWithinMs);
    if (converged) print(`${at()} converged`);
    const runs = reconcileRuns(supervisor.allWorkers, supervisor.killedAt);
    const requests = sys.emulator.log.entries({ since: mark });
    const violations = [
      ...eventual(),
      ...checkNoOverlap(runs),
      ...checkWritesGuarded(requests, USERS.worker),
    ];
    const evidence = {
      churn,
      runs,
      requests: sys.emulator.log.entries({}),
      namespace: NAMESPACE,
      t0,
    };
    for (const v of violations) for (const line of describeViolation(v, evidence)) print(line);
    return { faults: injected, violations };
  } finally {
    for (const proc of stopped) proc.child.kill('SIGCONT');
    await supervisor.stop();
    await sys.stop();
  }
}

/** Polls `ok` until it holds (true) or `withinMs` has passed (false). */
async function until(ok: () => boolean, withinMs: number): Promise<boolean> {
  return (await waitFor(ok, Boolean, withinMs, 500)).finished;
}
