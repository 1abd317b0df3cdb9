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

/** What the chart runs each app's container with: its memory limit in bytes and its node options. */
export function chartContainers(
  valuesYaml: string,
): Record<'watcher' | 'worker', { memoryLimit: number; nodeArgs: string[] }> {
  const values = parse(valuesYaml) as Record<
    'watcher' | 'worker',
    { nodeArgs?: string[]; resources?: { limits?: { memory?: string } } }
  >;
  const container = (app: 'watcher' | 'worker') => {
    const quantity = values[app].resources?.limits?.memory;
    const bytes = quantity === undefined ? undefined : parseQuantity(quantity);
    if (bytes === undefined) throw new Error(`${app}.resources.limits.memory: not a quantity`);
    return { memoryLimit: bytes, nodeArgs: values[app].nodeArgs ?? [] };
  };
  return { watcher: container('watcher'), worker: container('worker') };
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
  /** The watcher ran at the limit docs/operations.md gives for this N. */
  readonly sized?: boolean;
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

/**
 * The watcher's memory limit docs/operations.md (Watcher memory) gives for N BackupJobs; the
 * scenario holds the operator to it.
 */
function sizedWatcherLimitMiB(objects: number): number | undefined {
  if (objects <= 10_000) return 256;
  if (objects <= 50_000) return 512;
  return undefined;
}

/**
 * The chart's memory limits, applied: each process of the operator in a memory cgroup of its own,
 * as a container runtime does, through a cold start of N BackupJobs: the workers at the chart's
 * limit, the watcher at the chart's and at the one docs/operations.md gives for N. Node sizes its
 * heap from the limit it starts under, so these peaks, not those of a machine without limits,
 * say what a pod needs. The baseline runs under the chart's watcher limit: one process holding
 * what the watcher holds and doing what the workers do.
 */
export const memoryLimitScenario: Scenario = {
  name: 'memory-limit',
  title: "Memory under the chart's limits: a cold start with each process in a memory cgroup",
  async run(ctx) {
    const { objects, workers, latencyMs, capSeconds } = ctx.size.memoryLimit;
    const chart = chartContainers(readFileSync(CHART_VALUES, 'utf8'));
    const chartWatcherMiB = chart.watcher.memoryLimit / MiB;
    const runs: LimitedRun[] = [];
    for (const n of objects) {
      const sized = sizedWatcherLimitMiB(n);
      for (const watcherMiB of new Set([chartWatcherMiB, ...(sized ? [sized] : [])])) {
        const label = `${watcherMiB} MiB${watcherMiB === chartWatcherMiB ? " (the chart's)" : ''}`;
        const first = runs.length;
        if (ctx.systems.has('operator')) {
          runs.push(
            await withWorld({ latencyMs, objects: n }, async (emu) => {
              const sys = await startOperator({
                kubeconfigPath: emu.kubeconfigPath,
                workers,
                concurrency: ctx.size.workerConcurrency,
                shards: ctx.size.shards,
                memoryLimits: { watcher: watcherMiB * MiB, worker: chart.worker.memoryLimit },
                nodeArgs: { watcher: chart.watcher.nodeArgs, worker: chart.worker.nodeArgs },
              });
              try {
                const run = await coldStartWithin(sys, emu, n, capSeconds * 1000);
                return {
                  objects: n,
                  system: `operator ${workers}w, watcher ${label}`,
                  sized: watcherMiB === sized,
                  ...run,
                };
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
        for (const r of runs.slice(first)) {
          const peaks = r.processes.map((p) => `${p.name} ${p.killed ? 'killed' : p.peakMiB}`);
          ctx.log(`memory-limit N=${n} ${r.system}: ${r.ready} Ready; peaks ${peaks.join(', ')}`);
        }
      }
    }
    return {
      settings: {
        objects,
        workers,
        latencyMs,
        capSeconds,
        chartLimitsMiB: { watcher: chartWatcherMiB, worker: chart.worker.memoryLimit / MiB },
        chartNodeArgs: { watcher: chart.watcher.nodeArgs, worker: chart.worker.nodeArgs },
        sizedWatcherLimitsMiB: objects.map(sizedWatcherLimitMiB),
      },
      tables: [table(runs, latencyMs)],
      goals: goals(runs),
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

/** At each N: the operator at the documented limits, every BackupJob Ready and nothing killed. */
function goals(runs: readonly LimitedRun[]): Goal[] {
  return runs
    .filter((r) => r.sized)
    .map((r) => {
      const watcher = r.processes.find((p) => p.name.startsWith('watcher'));
      return {
        goal: `operator within the documented memory limits (N=${r.objects}, watcher ${watcher?.limitMiB} MiB)`,
        target: 'every BackupJob Ready, no process killed',
        measured: r.finished
          ? `all Ready in ${r.seconds} s; watcher's peak with a scrape ${watcher?.peakScrapedMiB} MiB`
          : `${r.ready} of ${r.objects} Ready; killed: ${
              r.processes
                .filter((p) => p.killed)
                .map((p) => p.name)
                .join(', ') || 'none'
            }`,
        met: r.finished,
      };
    });
}
