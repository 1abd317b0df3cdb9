import type { Table } from '../lib/result.js';
import { mainThreadWakeups } from '../lib/proc.js';
import { round } from '../lib/stats.js';
import { totals } from '../lib/redis-stats.js';
import { cpuNow, snapshot, waitQuiet, windowOf, type Snapshot } from '../env/measure.js';
import type { SystemUnderTest } from '../env/system.js';
import { withWorld } from '../env/world.js';
import type { EmulatorHandle } from '../env/emulator.js';
import { scrape } from '../lib/prom.js';
import {
  bestBaseline,
  compareBuild,
  operatorSpec,
  type Scenario,
  type SystemSpec,
} from './context.js';

interface IdleProcess {
  readonly name: string;
  readonly cpuMsPerSecond: number;
  readonly wakeupsPerSecond: number;
}

interface IdleRun {
  readonly system: string;
  readonly seconds: number;
  readonly processes: readonly IdleProcess[];
  readonly reconciles: number;
  readonly requestsPerSecond: number;
  /** The operator's Redis; the baseline has none. */
  readonly redis?: { readonly commandsPerSecond: number; readonly cpuMsPerSecond: number };
}

function wakeups(sys: SystemUnderTest): Record<string, number> {
  return Object.fromEntries(
    sys.processes.map((p) => [p.name, mainThreadWakeups(p.proc.child.pid ?? 0)]),
  );
}

/** CPU, requests and Redis counters first, metrics after: the scrape stays out of the window. */
async function closingSnapshot(sys: SystemUnderTest, emu: EmulatorHandle): Promise<Snapshot> {
  const at = Date.now();
  const { cpu, redisCommands } = await cpuNow(sys, emu);
  const requests = await emu.call('requests', undefined);
  const metrics = new Map(
    await Promise.all(
      sys.processes.map(async (p) => [p.name, await scrape(p.metricsUrl).catch(() => [])] as const),
    ),
  );
  return { at, metrics, cpu, requests, redisCommands };
}

async function measure(
  spec: SystemSpec,
  emu: EmulatorHandle,
  settleSeconds: number,
  windowSeconds: number,
): Promise<IdleRun> {
  const sys = await spec.start(emu.kubeconfigPath);
  try {
    await waitQuiet(sys, 300_000, 3000);
    // Past the one-off work of a system that just went quiet: idle keep-alive connections
    // closing (the emulator keeps them 30 s), a last collection.
    await new Promise((r) => setTimeout(r, settleSeconds * 1000));
    const before = await snapshot(sys, emu);
    const wokeBefore = wakeups(sys);
    await new Promise((r) => setTimeout(r, windowSeconds * 1000));
    const wokeAfter = wakeups(sys);
    const w = windowOf(before, await closingSnapshot(sys, emu));
    const perSecond = (n: number) => round(n / w.seconds, 2);
    const requests = Object.entries(w.requestsByVerb)
      .filter(([verb]) => verb !== 'watch')
      .reduce((a, [, n]) => a + n, 0);
    return {
      system: spec.label,
      seconds: round(w.seconds, 1),
      processes: sys.processes.map((p) => ({
        name: p.name,
        cpuMsPerSecond: perSecond((w.cpu[p.name] ?? 0) * 1000),
        wakeupsPerSecond: perSecond((wokeAfter[p.name] ?? 0) - (wokeBefore[p.name] ?? 0)),
      })),
      reconciles: w.reconciles,
      requestsPerSecond: perSecond(requests),
      redis:
        w.cpu.redis === undefined
          ? undefined
          : {
              commandsPerSecond: perSecond(totals(w.redisCommands).total),
              cpuMsPerSecond: perSecond(w.cpu.redis * 1000),
            },
    };
  } finally {
    await sys.stop();
  }
}

/**
 * What a converged system costs while nothing changes: each process's CPU and how often its
 * main thread wakes, over a window in which the bench neither scrapes nor probes it. Kubelet's
 * probes and Prometheus's scrapes, which a cluster adds, are not in it.
 */
export const idleScenario: Scenario = {
  name: 'idle',
  title: 'Idle: what a converged system costs while nothing changes',
  async run(ctx) {
    const { objects, workers, latencyMs, settleSeconds, windowSeconds } = ctx.size.idle;
    const specs: SystemSpec[] = [];
    if (ctx.systems.has('operator')) {
      specs.push(operatorSpec(ctx, workers));
      for (const spec of ctx.compareBuilds) {
        specs.push(operatorSpec(ctx, workers, { build: compareBuild(spec) }));
      }
    }
    if (ctx.systems.has('baseline')) specs.push(bestBaseline(ctx, latencyMs));
    const runs: IdleRun[] = [];
    for (const spec of specs) {
      const run = await withWorld({ latencyMs, objects, converged: true }, (emu) =>
        measure(spec, emu, settleSeconds, windowSeconds),
      );
      ctx.log(`idle ${spec.label}: ${JSON.stringify(run.processes)}`);
      runs.push(run);
    }
    const table: Table = {
      title: `${objects} converged BackupJobs at ${latencyMs} ms API latency, ${settleSeconds} s after the last reconcile, over ${windowSeconds} s`,
      columns: [
        { key: 'system', label: 'system' },
        { key: 'process', label: 'process' },
        { key: 'cpu', label: 'CPU (ms per s)' },
        { key: 'wakeups', label: 'main thread wake-ups per s' },
        { key: 'requests', label: 'API requests per s (whole system)' },
        { key: 'redis', label: 'Redis commands per s / Redis CPU (ms per s)' },
        { key: 'reconciles', label: 'reconciles in the window' },
      ],
      rows: runs.flatMap((run) =>
        run.processes.map((p, i) => ({
          system: run.system,
          process: p.name,
          cpu: p.cpuMsPerSecond,
          wakeups: p.wakeupsPerSecond,
          requests: i === 0 ? run.requestsPerSecond : '',
          redis:
            i === 0 && run.redis
              ? `${run.redis.commandsPerSecond} / ${run.redis.cpuMsPerSecond}`
              : '',
          reconciles: i === 0 ? run.reconciles : '',
        })),
      ),
    };
    return {
      settings: { objects, workers, latencyMs, settleSeconds, windowSeconds },
      tables: [table],
      notes: [
        "CPU from /proc/<pid>/stat (10 ms ticks), wake-ups from the main thread's voluntary context switches; API requests leave out watches (the Lease renewals are in them).",
      ],
      raw: runs,
    };
  },
};
