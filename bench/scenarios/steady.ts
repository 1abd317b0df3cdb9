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
  /**
   * The periodic resync of the running system: from its log line (the timer fired) until every key
   * was reconciled or, for the operator, proven converged by the workers' marks and skipped.
   */
  readonly resyncSeconds: number;
  /** Keys the resync skipped as proven converged (the operator's watcher; 0 for the baseline). */
  readonly skipped: number;
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
      const logged = sys.processes.map((p) => p.proc.lines.length);
      const start = await awaitResync(sys, emu, logged, RESYNC_LEAD_MS + 600_000);
      // The operator's watcher sends on only the keys its marks do not prove converged.
      const rechecked =
        spec.kind === 'baseline' ? undefined : await awaitRechecked(sys, logged, 600_000);
      const toRun = rechecked ? rechecked.sent : objects;
      const ran = await waitForReconciles(sys, counted + toRun, 600_000, RESYNC_POLL_MS);
      const ended = !ran
        ? Number.NaN
        : toRun === 0 && rechecked
          ? rechecked.at
          : Math.max(Date.now(), rechecked?.at ?? 0);
      const end = await cpuNow(sys, emu);
      const began = start?.at ?? Number.NaN;
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
        skipped: rechecked?.converged ?? 0,
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
 * Waits for the resync's log line (both systems log `resync` as the timer fires) and returns its
 * time, with CPU as it was two polls before it was seen: the whole pass is in the window, at the
 * price of up to two polls of idle CPU. The baseline answers no scrape while a pass of no-op
 * reconciles runs (they never wait on I/O), so its log is the one clock both systems share.
 */
async function awaitResync(
  sys: SystemUnderTest,
  emu: EmulatorHandle,
  logged: readonly number[],
  timeoutMs: number,
): Promise<{ at: number; cpu: Record<string, number> } | undefined> {
  const deadline = Date.now() + timeoutMs;
  const readings = [(await cpuNow(sys, emu)).cpu];
  while (Date.now() < deadline) {
    await sleep(RESYNC_POLL_MS);
    readings.push((await cpuNow(sys, emu)).cpu);
    const line = loggedSince(sys, logged, '"msg":"resync"');
    if (line) return { at: timeOf(line), cpu: readings.at(-3) ?? readings[0]! };
  }
  return undefined;
}

/** The watcher's account of the resync once every rechecked key was skipped or sent on. */
async function awaitRechecked(
  sys: SystemUnderTest,
  logged: readonly number[],
  timeoutMs: number,
): Promise<{ at: number; converged: number; sent: number } | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const line = loggedSince(sys, logged, '"msg":"rechecked unchanged keys"');
    if (line) {
      const { converged, sent } = JSON.parse(line) as { converged: number; sent: number };
      return { at: timeOf(line), converged, sent };
    }
    await sleep(RESYNC_POLL_MS);
  }
  return undefined;
}

function loggedSince(
  sys: SystemUnderTest,
  logged: readonly number[],
  text: string,
): string | undefined {
  for (const [i, p] of sys.processes.entries()) {
    const line = p.proc.lines.slice(logged[i] ?? 0).find((l) => l.includes(text));
    if (line) return line;
  }
  return undefined;
}

const timeOf = (line: string) => Date.parse((JSON.parse(line) as { time: string }).time);

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

const perKey = (n: number, r: SteadyRun) => round(n / r.objects, 3);

/**
 * The watcher's environment for a timed resync: its RESYNC_PERIOD set to the size's period, as
 * `steady` waits for that pass (the default of 10 h would never come), and its info lines, which
 * mark the pass's start and end (a handful per pass, none per key).
 */
export function resyncingWatcherEnv(ctx: BenchContext): Record<string, string> {
  return { RESYNC_PERIOD: `${ctx.size.steady.resyncPeriodSeconds}s`, LOG_LEVEL: 'info' };
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
        { key: 'skipped', label: 'skipped as proven converged' },
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
          skipped: r.skipped,
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
      measured: `${writes(r.window)} writes in ${r.window.reconciles} reconciles${r.skipped ? ` (${r.skipped} keys skipped as proven converged)` : ''}`,
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
        `The resync is the periodic one of a running system (the watcher's RESYNC_PERIOD, the baseline's RESYNC_PERIOD_SECONDS, both ${ctx.size.steady.resyncPeriodSeconds} s). The baseline reconciles every cached BackupJob again against a converged world. The operator's watcher rechecks every cached BackupJob: a key whose workers' mark proves it converged (its last run, over the same objects and reconciler configuration, wrote nothing and its RequeueAfter is not yet due) is skipped, the others are enqueued and reconciled. It begins at the log line each system writes when its timer fires (the baseline answers no scrape while it runs a pass of no-op reconciles, which never wait on I/O) and ends when the reconcile counters, polled every ${RESYNC_POLL_MS} ms, have grown by the keys sent to be reconciled, or, when the watcher sent none, at its log line that accounts for every rechecked key. The per-key columns and Redis commands cover the window from the quiet system before the resync to the quiet system after it (the idle wait for the timer included, which adds next to nothing); CPU is read from /proc (and Redis' INFO) from two polls before the resync's log line was seen to the end.`,
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
