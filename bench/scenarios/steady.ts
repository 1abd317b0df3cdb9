import { setTimeout as sleep } from 'node:timers/promises';
import { round } from '../lib/stats.js';
import type { Goal, Table } from '../lib/result.js';
import { totals } from '../lib/redis-stats.js';
import {
  markBeforeStart,
  cpuNow,
  reconcileCount,
  snapshot,
  waitForReconciles,
  waitQuiet,
  windowOf,
  writes,
  type Window,
} from '../env/measure.js';
import { withWorld } from '../env/world.js';
import type { SystemUnderTest } from '../env/system.js';
import type { EmulatorHandle } from '../env/emulator.js';
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
  /** Spawn → every key reconciled once: start-up, the initial list and the new leader's pass. */
  readonly firstPassSeconds: number;
  /** The periodic resync of the running system: its first reconcile to its last. */
  readonly resyncSeconds: number;
  /** CPU seconds per process during the resync, and `operator` (all the system's processes). */
  readonly cpu: Record<string, number>;
  /** From the quiet system before the resync to the quiet system after it. */
  readonly window: Window;
  /** Gets and lists of API resources once the system was ready: what its reconciles read. */
  readonly apiReads: number;
}

/** Polls at this pace while the resync runs, so its two ends are known to ±this. */
const RESYNC_POLL_MS = 250;
/** How long before the earliest moment the resync timer can fire the reconciles are counted. */
const RESYNC_LEAD_MS = 2000;

/**
 * `spec` (started with its resync period) on `objects` converged BackupJobs: the first pass after
 * start, then the periodic resync of the running system, timed from its first reconcile to its
 * last.
 */
export async function steady(
  ctx: BenchContext,
  spec: SystemSpec,
  latencyMs: number,
  objects = ctx.size.steady.objects,
): Promise<SteadyRun> {
  return withWorld({ latencyMs, objects, converged: true }, async (emu) => {
    const before = await markBeforeStart(emu);
    const sys = await spec.start(emu.kubeconfigPath);
    try {
      const ready = await snapshot(sys, emu);
      const firstPass = await waitForReconciles(sys, objects, 600_000);
      const firstPassSeconds = (Date.now() - before.at) / 1000;
      const quiet = firstPass && (await waitQuiet(sys, 60_000, 1000));
      const idle = await snapshot(sys, emu);
      // A key's own RequeueAfter can run it between the first pass and the resync; the resync's
      // timer starts after the processes do, so reconciles before one period from then are not it.
      const countFrom = before.at + ctx.size.steady.resyncPeriodSeconds * 1000 - RESYNC_LEAD_MS;
      if (Date.now() > countFrom) {
        throw new Error(
          `${spec.label}: the first pass and the quiet after it took ${round((Date.now() - before.at) / 1000)} s, too close to the resync; raise steady.resyncPeriodSeconds`,
        );
      }
      await sleep(countFrom - Date.now());
      const counted = await reconcileCount(sys);
      const start = await awaitResync(sys, emu, counted, RESYNC_LEAD_MS + 600_000);
      const ended = (await waitForReconciles(sys, counted + objects, 600_000, RESYNC_POLL_MS))
        ? Date.now()
        : Number.NaN;
      const end = await cpuNow(sys, emu);
      const began =
        spec.kind === 'baseline' ? baselineResyncLogged(sys) : (start?.at ?? Number.NaN);
      const cpu = cpuBetween(start?.cpu ?? {}, end.cpu);
      const completed = quiet && !Number.isNaN(ended) && (await waitQuiet(sys, 60_000, 1000));
      const after = await snapshot(sys, emu);
      const window = windowOf(idle, after);
      ctx.log(
        `steady ${objects} ${latencyMs}ms ${spec.label}: first pass ${round(firstPassSeconds)} s, resync ${round((ended - began) / 1000)} s, ${window.reconciles} reconciles, ${writes(window)} writes, ${JSON.stringify(window.requests)}`,
      );
      const apiReads = windowOf(ready, after).reconcileReads;
      return {
        latencyMs,
        system: spec.label,
        objects,
        completed,
        firstPassSeconds,
        resyncSeconds: (ended - began) / 1000,
        cpu,
        window,
        apiReads,
      };
    } finally {
      await sys.stop();
    }
  });
}

/**
 * Waits for the resync's first reconcile and returns when it was seen, with CPU as it was two
 * polls before: the timer fired after that, and the work before the first reconcile ends (the
 * watcher's enqueueing) is in the window, at the price of up to two polls of idle CPU.
 */
async function awaitResync(
  sys: SystemUnderTest,
  emu: EmulatorHandle,
  counted: number,
  timeoutMs: number,
): Promise<{ at: number; cpu: Record<string, number> } | undefined> {
  const deadline = Date.now() + timeoutMs;
  const readings = [(await cpuNow(sys, emu)).cpu];
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, RESYNC_POLL_MS));
    readings.push((await cpuNow(sys, emu)).cpu);
    if ((await reconcileCount(sys)) > counted) {
      return { at: Date.now(), cpu: readings.at(-3) ?? readings[0]! };
    }
  }
  return undefined;
}

function cpuBetween(
  from: Record<string, number>,
  to: Record<string, number>,
): Record<string, number> {
  const cpu: Record<string, number> = {};
  for (const [name, seconds] of Object.entries(to))
    cpu[name] = seconds - (from[name] ?? Number.NaN);
  cpu.operator = Object.entries(cpu)
    .filter(([name]) => name !== 'emulator' && name !== 'redis')
    .reduce((a, [, v]) => a + v, 0);
  return cpu;
}

/**
 * When the baseline's resync began, from its log line: its first reconcile cannot be polled, as
 * the process answers no scrape until a pass of no-op reconciles (no I/O to wait on) is over.
 */
function baselineResyncLogged(sys: SystemUnderTest): number {
  const lines = sys.processes[0]?.proc.lines ?? [];
  for (const line of [...lines].reverse()) {
    if (!line.includes('"msg":"resync"')) continue;
    return Date.parse((JSON.parse(line) as { time: string }).time);
  }
  return Number.NaN;
}

const perKey = (n: number, r: SteadyRun) => round(n / r.objects, 3);

/**
 * The watcher's environment for a timed resync: its RESYNC_PERIOD set to the size's period, as
 * `steady` waits for that pass (the default of 10 h would never come).
 */
export function resyncingWatcherEnv(ctx: BenchContext): Record<string, string> {
  return { RESYNC_PERIOD: `${ctx.size.steady.resyncPeriodSeconds}s` };
}

export const steadyScenario: Scenario = {
  name: 'steady',
  title: 'Steady state: a pass over converged BackupJobs (a resync)',
  async run(ctx) {
    const { objects, workers, latencies } = ctx.size.steady;
    const runs: SteadyRun[] = [];
    for (const latencyMs of latencies) {
      const specs: SystemSpec[] = [];
      const period = ctx.size.steady.resyncPeriodSeconds;
      if (ctx.systems.has('operator')) {
        specs.push(operatorSpec(ctx, workers, { watcherEnv: resyncingWatcherEnv(ctx) }));
      }
      if (ctx.systems.has('baseline')) {
        specs.push(bestBaseline(ctx, latencyMs, { RESYNC_PERIOD_SECONDS: String(period) }));
      }
      for (const spec of specs) runs.push(await steady(ctx, spec, latencyMs));
    }
    const verbs = [...new Set(runs.flatMap((r) => Object.keys(r.window.requestsByVerb)))].sort();
    const table: Table = {
      title: `One resync of ${objects} converged BackupJobs: cost per key`,
      columns: [
        { key: 'latency', label: 'API latency' },
        { key: 'system', label: 'system' },
        { key: 'resync', label: 'resync took (s)' },
        { key: 'firstPass', label: 'first pass, start-up included (s)' },
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
          resync: round(r.resyncSeconds),
          firstPass: round(r.firstPassSeconds),
          reconciles: w.reconciles,
          ...Object.fromEntries(verbs.map((v) => [`v_${v}`, perKey(w.requestsByVerb[v] ?? 0, r)])),
          writes: writes(w),
          redis: redis.total ? `${perKey(redis.total, r)} (${perKey(redis.scripts, r)})` : '–',
          cpu: Object.entries(r.cpu)
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
    const baseline = runs.find((run) => run.system.startsWith('baseline'));
    for (const r of runs.filter((run) => run.system.startsWith('operator'))) {
      if (baseline) {
        const ratio = r.resyncSeconds / baseline.resyncSeconds;
        goals.push({
          goal: `resync × baseline's (${r.system}, ${r.objects} converged BackupJobs, ${r.latencyMs} ms)`,
          target: '≤ 1.5',
          measured: `${round(ratio)} (${round(r.resyncSeconds)} vs ${round(baseline.resyncSeconds)} s)`,
          met: r.completed && baseline.completed ? ratio <= 1.5 : null,
          note: r.completed && baseline.completed ? undefined : 'a resync did not complete',
        });
      }
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
        `The resync is the periodic one of a running system (the watcher's RESYNC_PERIOD, the baseline's RESYNC_PERIOD_SECONDS, both ${ctx.size.steady.resyncPeriodSeconds} s): every cached BackupJob is enqueued again and reconciled against a converged world. It ends when the reconcile counters, polled every ${RESYNC_POLL_MS} ms, have grown by the number of BackupJobs. It begins, for the operator, at the first reconcile the polls see from ${RESYNC_LEAD_MS / 1000} s before the timer can first fire (up to one poll after it fired; a key's own RequeueAfter may run it earlier, and is not the resync), and for the baseline at its log line when its timer fired: the baseline answers no scrape while it runs a pass of no-op reconciles, which never wait on I/O. The per-key columns and Redis commands cover the window from the quiet system before the resync to the quiet system after it (the idle wait for the timer included, which adds next to nothing); CPU is read from /proc (and Redis' INFO) from two polls before the first reconcile was seen to the end.`,
        "The first pass runs from spawn until every key was reconciled once: Redis and process start-up, the leader's election and initial lists, and the pass over every key, which is what a new leader does.",
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
