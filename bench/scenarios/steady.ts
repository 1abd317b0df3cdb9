import { round } from '../lib/stats.js';
import type { Goal, Table } from '../lib/result.js';
import { totals } from '../lib/redis-stats.js';
import {
  markBeforeStart,
  snapshot,
  waitForReconciles,
  waitQuiet,
  windowOf,
  writes,
  type Window,
} from '../env/measure.js';
import { withWorld } from '../env/world.js';
import {
  bestBaseline,
  operatorSpec,
  type BenchContext,
  type Scenario,
  type SystemSpec,
} from './context.js';

export interface SteadyRun {
  readonly latencyMs: number;
  readonly system: string;
  readonly objects: number;
  readonly completed: boolean;
  readonly window: Window;
  /** Gets and lists of API resources once the system was ready: what its reconciles read. */
  readonly apiReads: number;
}

/** One pass of `spec` over `objects` converged BackupJobs: what a resync or a new leader does. */
export async function steady(
  ctx: BenchContext,
  spec: SystemSpec,
  latencyMs: number,
  objects = ctx.size.steady.objects,
): Promise<SteadyRun> {
  return withWorld({ latencyMs, objects, converged: true }, async (emu) => {
    // A new leader lists every BackupJob and enqueues every key, exactly what a resync does; the
    // world is already converged, so this first pass is the resync measured.
    const before = await markBeforeStart(emu);
    const sys = await spec.start(emu.kubeconfigPath);
    try {
      const ready = await snapshot(sys, emu);
      const completed =
        (await waitForReconciles(sys, objects, 600_000)) && (await waitQuiet(sys, 60_000, 1000));
      const after = await snapshot(sys, emu);
      const window = windowOf(before, after);
      ctx.log(
        `steady ${objects} ${latencyMs}ms ${spec.label}: ${window.reconciles} reconciles, ${writes(window)} writes, ${JSON.stringify(window.requests)}`,
      );
      const apiReads = windowOf(ready, after).reconcileReads;
      return { latencyMs, system: spec.label, objects, completed, window, apiReads };
    } finally {
      await sys.stop();
    }
  });
}

const perKey = (n: number, r: SteadyRun) => round(n / r.objects, 3);

export const steadyScenario: Scenario = {
  name: 'steady',
  title: 'Steady state: a pass over converged BackupJobs (a resync)',
  async run(ctx) {
    const { objects, workers, latencies } = ctx.size.steady;
    const runs: SteadyRun[] = [];
    for (const latencyMs of latencies) {
      const specs: SystemSpec[] = [];
      if (ctx.systems.has('operator')) specs.push(operatorSpec(ctx, workers));
      if (ctx.systems.has('baseline')) specs.push(bestBaseline(ctx, latencyMs));
      for (const spec of specs) runs.push(await steady(ctx, spec, latencyMs));
    }
    const verbs = [...new Set(runs.flatMap((r) => Object.keys(r.window.requestsByVerb)))].sort();
    const table: Table = {
      title: `One resync of ${objects} converged BackupJobs: cost per key`,
      columns: [
        { key: 'latency', label: 'API latency' },
        { key: 'system', label: 'system' },
        { key: 'seconds', label: 'resync took (s)' },
        { key: 'reconciles', label: 'reconciles' },
        ...verbs.map((v) => ({ key: `v_${v}`, label: `${v}/key`, digits: 3 })),
        { key: 'writes', label: 'writes by reconciles' },
        { key: 'redis', label: 'Redis cmds/key (scripts)' },
        { key: 'cpu', label: 'CPU s per process' },
      ],
      rows: runs.map((r) => {
        const w = r.window;
        const redis = totals(w.redisCommands);
        return {
          latency: `${r.latencyMs} ms`,
          system: r.system,
          seconds: round(w.seconds),
          reconciles: w.reconciles,
          ...Object.fromEntries(verbs.map((v) => [`v_${v}`, perKey(w.requestsByVerb[v] ?? 0, r)])),
          writes: writes(w),
          redis: redis.total ? `${perKey(redis.total, r)} (${perKey(redis.scripts, r)})` : '–',
          cpu: Object.entries(w.cpu)
            .map(([k, v]) => `${k} ${round(v)}`)
            .join(', '),
        };
      }),
    };
    const goals: Goal[] = runs.map((r) => ({
      goal: `zero writes on a no-op reconcile (${r.system}, ${r.latencyMs} ms)`,
      target: '0 writes in a resync of converged objects',
      measured: `${writes(r.window)} writes in ${r.window.reconciles} reconciles`,
      met: writes(r.window) === 0 && r.completed,
      note: r.completed ? undefined : 'the pass did not complete within 600 s',
    }));
    for (const r of runs.filter((run) => run.system.startsWith('operator'))) {
      goals.push({
        goal: `no API read by reconciles (${r.system}, ${r.latencyMs} ms)`,
        target: '0 GET/LIST from workers; the watcher alone lists and watches',
        measured: `${r.apiReads} API reads after start-up, ${r.window.reconciles} reconciles`,
        met: r.apiReads === 0 && r.completed,
      });
    }
    return {
      settings: {
        objects,
        operatorWorkers: workers,
        workerConcurrency: ctx.size.workerConcurrency,
        latenciesMs: latencies,
      },
      tables: [table],
      goals,
      notes: [
        "The pass measured is the first after start on an already converged world: a new leader (the watcher; the baseline's informer) lists every BackupJob and enqueues every key, which is what a resync does. The window therefore includes the initial list and watch requests, and CPU includes process start-up.",
        "Writes by reconciles: the workers' own count of their create/update/patch/delete requests (rest_client_requests_total), which leaves out the watcher's Lease renewals and leader election Event (the per-verb columns include them); for the baseline, every write the emulator served except Lease renewals.",
        'Redis commands are counted by INFO commandstats, which includes the commands Lua scripts run inside Redis; the number in brackets is the script calls alone.',
      ],
      raw: runs.map((r) => ({
        ...r,
        window: { ...r.window, queueWait: Object.fromEntries(r.window.queueWait) },
      })),
    };
  },
};
