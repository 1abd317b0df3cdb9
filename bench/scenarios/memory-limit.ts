import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseQuantity } from '#reconciler';
import type { Cell, Goal, Table } from '../lib/result.js';
import { cpuSeconds } from '../lib/proc.js';
import { scrape } from '../lib/prom.js';
import { round } from '../lib/stats.js';
import {
  dist,
  startBaseline,
  startOperator,
  type OperatorProcess,
  type SystemUnderTest,
} from '../env/system.js';
import { withWorld } from '../env/world.js';
import type { EmulatorHandle } from '../env/emulator.js';
import type { Scenario } from './context.js';

const MiB = 2 ** 20;
const CHART_VALUES = dist('../helm/backupjob-operator/values.yaml');

/** The chart's default memory limits of the watcher and worker containers, in bytes. */
export function chartMemoryLimits(valuesYaml: string): { watcher: number; worker: number } {
  const values = parse(valuesYaml) as Record<
    'watcher' | 'worker',
    { resources?: { limits?: { memory?: string } } }
  >;
  const limit = (app: 'watcher' | 'worker') => {
    const quantity = values[app].resources?.limits?.memory;
    const bytes = quantity === undefined ? undefined : parseQuantity(quantity);
    if (bytes === undefined) throw new Error(`${app}.resources.limits.memory: not a quantity`);
    return bytes;
  };
  return { watcher: limit('watcher'), worker: limit('worker') };
}

interface LimitedProcess {
  readonly name: string;
  readonly limitMiB: number;
  /** Most memory charged to its cgroup until every BackupJob was Ready (or it was killed). */
  readonly peakMiB: number;
  /** The same once a scrape of its /metrics has been answered, as Prometheus's would be. */
  readonly peakScrapedMiB: number;
  /** Killed by the kernel for going over its limit. */
  readonly killed: boolean;
  readonly cpuSeconds: number;
}

interface LimitedRun {
  readonly objects: number;
  readonly system: string;
  /** Every BackupJob Ready within the cap, with no process killed. */
  readonly finished: boolean;
  readonly ready: number;
  readonly seconds: number;
  readonly processes: readonly LimitedProcess[];
  /** Why the system did not start, when it did not. */
  readonly error?: string;
}

const processFigures = (p: OperatorProcess, peakMiB: number): LimitedProcess => {
  const cgroup = p.memoryCgroup;
  if (!cgroup) throw new Error(`${p.name} runs without a memory limit`);
  const killed = cgroup.oomKills() > 0;
  let cpu = NaN;
  let peakScrapedMiB = NaN;
  if (p.proc.running) {
    cpu = cpuSeconds(p.proc.child.pid ?? 0);
    peakScrapedMiB = round(cgroup.peakBytes() / MiB, 0);
  }
  return {
    name: p.name,
    limitMiB: round(cgroup.limitBytes / MiB, 0),
    peakMiB,
    peakScrapedMiB,
    killed,
    cpuSeconds: round(cpu, 2),
  };
};

/**
 * Runs the cold start of `objects` with every process in its memory cgroup, until every
 * BackupJob is Ready, a process is killed, or the cap; then scrapes each process once.
 */
async function coldStartWithin(
  sys: SystemUnderTest,
  emu: EmulatorHandle,
  objects: number,
  capMs: number,
): Promise<Omit<LimitedRun, 'system' | 'objects'>> {
  const t0 = Date.now();
  let ready: number;
  for (;;) {
    ready = (await emu.call('progress', undefined)).ready;
    const dead = sys.processes.some((p) => !p.proc.running);
    if (ready >= objects || dead || Date.now() - t0 > capMs) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const seconds = round((Date.now() - t0) / 1000, 1);
  const peaks = sys.processes.map((p) => round((p.memoryCgroup?.peakBytes() ?? NaN) / MiB, 0));
  await Promise.all(
    sys.processes.filter((p) => p.proc.running).map((p) => scrape(p.metricsUrl).catch(() => [])),
  );
  const processes = sys.processes.map((p, i) => processFigures(p, peaks[i] ?? NaN));
  return {
    finished: ready >= objects && !processes.some((p) => p.killed),
    ready,
    seconds,
    processes,
  };
}

/** The label of a watcher limit: the chart's default, or the multiple of it tried beside. */
const limitLabel = (mib: number, chartMiB: number) =>
  mib === chartMiB ? `${mib} MiB (the chart's)` : `${mib} MiB`;

/**
 * The chart's memory limits, applied: each process of the operator in a memory cgroup of its own
 * (the watcher at the chart's limit and at larger ones, each worker at the chart's), as a
 * container runtime does, through a cold start of N BackupJobs. Node sizes its heap from the
 * limit it starts under, so these peaks, not those of a machine without limits, say what a pod
 * needs. The baseline runs under the watcher's limits too: one process holding what the watcher
 * holds and doing what the workers do.
 */
export const memoryLimitScenario: Scenario = {
  name: 'memory-limit',
  title: "Memory under the chart's limits: a cold start with each process in a memory cgroup",
  async run(ctx) {
    const { objects, watcherLimitsMiB, workers, latencyMs, capSeconds } = ctx.size.memoryLimit;
    const chart = chartMemoryLimits(readFileSync(CHART_VALUES, 'utf8'));
    const chartWatcherMiB = chart.watcher / MiB;
    const watcherLimits = watcherLimitsMiB.map((m) => (m === 'chart' ? chartWatcherMiB : m));
    const runs: LimitedRun[] = [];
    for (const n of objects) {
      for (const watcherMiB of watcherLimits) {
        const label = limitLabel(watcherMiB, chartWatcherMiB);
        if (ctx.systems.has('operator')) {
          runs.push(
            await withWorld({ latencyMs, objects: n }, async (emu) => {
              const limits = { watcher: watcherMiB * MiB, worker: chart.worker };
              const sys = await startOperator({
                kubeconfigPath: emu.kubeconfigPath,
                workers,
                concurrency: ctx.size.workerConcurrency,
                shards: ctx.size.shards,
                memoryLimits: limits,
              });
              try {
                const run = await coldStartWithin(sys, emu, n, capSeconds * 1000);
                return { objects: n, system: `operator ${workers}w, watcher ${label}`, ...run };
              } finally {
                await sys.stop();
              }
            }),
          );
        }
        // The baseline under the chart's watcher limit only: what one process needs is the
        // comparison, and its larger runs take minutes.
        if (ctx.systems.has('baseline') && watcherMiB === chartWatcherMiB) {
          runs.push(
            await withWorld({ latencyMs, objects: n }, async (emu) => {
              const system = `baseline c=80, ${label}`;
              let sys: SystemUnderTest;
              try {
                sys = await startBaseline({
                  kubeconfigPath: emu.kubeconfigPath,
                  concurrency: 80,
                  memoryLimit: watcherMiB * MiB,
                });
              } catch (err) {
                const error = String(err).split('\n')[0] ?? '';
                return {
                  objects: n,
                  system,
                  finished: false,
                  ready: 0,
                  seconds: NaN,
                  processes: [],
                  error,
                };
              }
              try {
                return {
                  objects: n,
                  system,
                  ...(await coldStartWithin(sys, emu, n, capSeconds * 1000)),
                };
              } finally {
                await sys.stop();
              }
            }),
          );
        }
        ctx.log(`memory-limit N=${n}, watcher ${label}: ${JSON.stringify(runs.at(-1))}`);
      }
    }
    return {
      settings: {
        objects,
        workers,
        latencyMs,
        capSeconds,
        chartLimitsMiB: { watcher: chartWatcherMiB, worker: chart.worker / MiB },
        watcherLimitsMiB: watcherLimits,
      },
      tables: [table(runs, latencyMs)],
      goals: goals(runs, chartWatcherMiB),
      notes: [
        'Each process starts inside its own memory cgroup (the limit in memory.limit_in_bytes on cgroup v1, memory.max on v2), so Node sizes its heap from the limit as in a pod; the peak is the most memory charged to the cgroup (memory.max_usage_in_bytes, memory.peak), page cache included; "killed" is an OOM kill the kernel counted in that cgroup.',
      ],
      raw: runs,
    };
  },
};

function table(runs: readonly LimitedRun[], latencyMs: number): Table {
  return {
    title: `Cold start at ${latencyMs} ms under memory limits: each process's peak until every BackupJob was Ready, and after one scrape of its /metrics`,
    columns: [
      { key: 'objects', label: 'N' },
      { key: 'system', label: 'system' },
      { key: 'outcome', label: 'outcome' },
      { key: 'process', label: 'process' },
      { key: 'limit', label: 'limit (MiB)' },
      { key: 'peak', label: 'peak (MiB)' },
      { key: 'scraped', label: 'peak with a scrape (MiB)' },
      { key: 'cpu', label: 'CPU (s)' },
    ],
    rows: runs.flatMap((r): Record<string, Cell>[] => {
      const outcome = r.error
        ? `did not start: ${r.error}`
        : r.finished
          ? `all Ready in ${r.seconds} s`
          : `${r.ready} Ready after ${r.seconds} s`;
      if (r.processes.length === 0) {
        return [
          {
            objects: r.objects,
            system: r.system,
            outcome,
            process: '',
            limit: '',
            peak: '',
            scraped: '',
            cpu: '',
          },
        ];
      }
      return r.processes.map((p, i) => ({
        objects: i === 0 ? r.objects : '',
        system: i === 0 ? r.system : '',
        outcome: i === 0 ? outcome : '',
        process: p.name,
        limit: p.limitMiB,
        peak: p.killed ? `killed at ${p.peakMiB}` : p.peakMiB,
        scraped: Number.isNaN(p.peakScrapedMiB) ? '–' : p.peakScrapedMiB,
        cpu: Number.isNaN(p.cpuSeconds) ? '–' : p.cpuSeconds,
      }));
    }),
  };
}

/** At each N: the operator within the chart's limits, every BackupJob Ready and nothing killed. */
function goals(runs: readonly LimitedRun[], chartWatcherMiB: number): Goal[] {
  return runs
    .filter(
      (r) =>
        r.system.startsWith('operator') &&
        r.system.includes(`${chartWatcherMiB} MiB (the chart's)`),
    )
    .map((r) => {
      const worst = r.processes.reduce((a, p) =>
        p.peakScrapedMiB / p.limitMiB > a.peakScrapedMiB / a.limitMiB ? p : a,
      );
      return {
        goal: `operator within the chart's memory limits (N=${r.objects})`,
        target: 'every BackupJob Ready, no process killed',
        measured: r.finished
          ? `all Ready in ${r.seconds} s; highest peak ${worst.name} ${worst.peakScrapedMiB} of ${worst.limitMiB} MiB`
          : `${r.ready} of ${r.objects} Ready; killed: ${
              r.processes
                .filter((p) => p.killed)
                .map((p) => p.name)
                .join(', ') || 'none'
            }`,
        met: r.finished,
        note: r.finished ? undefined : 'see the larger watcher limits in the same run',
      };
    });
}
