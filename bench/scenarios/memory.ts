import { round } from '../lib/stats.js';
import type { Goal, Table } from '../lib/result.js';
import { memory } from '../lib/proc.js';
import { scrape, sumOf } from '../lib/prom.js';
import { waitForReconciles, waitQuiet } from '../env/measure.js';
import { memoryAfterGc, type MemoryAfterGc } from '../lib/inspector.js';
import { EmulatorHandle } from '../env/emulator.js';
import { PREFIX } from '../env/world.js';
import { bestBaseline, operatorSpec, type Scenario, type SystemSpec } from './context.js';

interface MemoryRow {
  readonly objects: number;
  readonly system: string;
  readonly process: string;
  /** Resident set at the drained steady state, before any forced collection or scrape. */
  readonly rss: number;
  /**
   * Right after a scrape of /metrics, which the heap figures come from: the leading watcher's
   * per-BackupJob series make that response grow with the objects.
   */
  readonly rssScraped: number;
  readonly heapUsed: number;
  /** V8's committed heap: above heapUsed by what a peak left reserved. */
  readonly heapTotal: number;
  /** Memory outside the V8 heap that JS objects hold (Buffers, ArrayBuffers). */
  readonly external: number;
  /** The same after a full, compacting GC: what the process keeps. */
  readonly gc: MemoryAfterGc;
  /** The highest resident set of the process's life (VmHWM): the first pass's peak. */
  readonly peak: number;
}

const MiB = 2 ** 20;
const KiB = 1024;
const HEAP_GOAL_BYTES = 3 * KiB;
const RSS_GOAL_BYTES = 8 * KiB;
/** Idle time after the first pass drained, so the figures are of a system at rest. */
const IDLE_MS = 30_000;

/**
 * Starts the system on the seeded objects and waits for its drained steady state: every key
 * reconciled once (the first pass, which is what a resync does), the queue empty and nothing
 * running for IDLE_MS. Then reads each process's memory as it is, and again after a full GC.
 */
async function measure(
  spec: SystemSpec,
  emu: EmulatorHandle,
  objects: number,
): Promise<MemoryRow[]> {
  const sys = await spec.start(emu.kubeconfigPath, { inspect: true });
  try {
    await waitForReconciles(sys, objects, 600_000, 1000);
    await waitQuiet(sys, 120_000, IDLE_MS);
    return await Promise.all(
      sys.processes.map(async (p) => {
        const pid = p.proc.child.pid ?? 0;
        const { rss, peak } = memory(pid);
        const metrics = await scrape(p.metricsUrl).catch(() => []);
        return {
          objects,
          system: spec.label,
          process: p.role,
          rss,
          rssScraped: memory(pid).rss,
          peak,
          heapUsed: sumOf(metrics, 'nodejs_heap_size_used_bytes'),
          heapTotal: sumOf(metrics, 'nodejs_heap_size_total_bytes'),
          external: sumOf(metrics, 'nodejs_external_memory_bytes'),
          gc: await memoryAfterGc(p.inspectPort ?? 0),
        };
      }),
    );
  } finally {
    await sys.stop();
  }
}

export const memoryScenario: Scenario = {
  name: 'memory',
  title: 'Memory: the drained steady state at two sizes, before and after a full GC',
  async run(ctx) {
    const sizes = [...ctx.size.memory.objects].sort((a, b) => a - b);
    const specs: SystemSpec[] = [];
    if (ctx.systems.has('operator')) specs.push(operatorSpec(ctx, 1));
    if (ctx.systems.has('baseline')) specs.push(bestBaseline(ctx, 0));
    const rows: MemoryRow[] = [];
    const emu = await EmulatorHandle.start();
    try {
      let seeded = 0;
      for (const n of sizes) {
        // Converged objects, each with its CronJob, grown in place from one size to the next.
        for (; seeded < n; seeded += Math.min(5000, n - seeded)) {
          await emu.call('create', {
            prefix: PREFIX,
            from: seeded,
            count: Math.min(5000, n - seeded),
            converged: true,
          });
        }
        ctx.log(`memory: ${n} BackupJobs seeded`);
        for (const spec of specs) {
          const measured = await measure(spec, emu, n);
          ctx.log(
            `memory ${n} ${spec.label}: ${measured.map((m) => `${m.process} ${round(m.rss / MiB)} MiB`).join(', ')}`,
          );
          rows.push(...measured);
        }
      }
    } finally {
      await emu.stop();
    }
    const [small, large] = [sizes[0] as number, sizes[sizes.length - 1] as number];
    const key = (r: MemoryRow) => `${r.system}/${r.process}`;
    const kinds = [...new Set(rows.map(key))];
    const perObject = kinds.map((k) => {
      const a = rows.filter((r) => key(r) === k && r.objects === small);
      const b = rows.filter((r) => key(r) === k && r.objects === large);
      const slope = (f: (r: MemoryRow) => number) => {
        const avg = (xs: MemoryRow[]) => xs.reduce((s, r) => s + f(r), 0) / Math.max(1, xs.length);
        return (avg(b) - avg(a)) / (large - small);
      };
      return {
        kind: k,
        rss: slope((r) => r.rss),
        rssScraped: slope((r) => r.rssScraped),
        heap: slope((r) => r.heapUsed),
        rssGc: slope((r) => r.gc.rss),
        heapGc: slope((r) => r.gc.heapUsed),
        peak: slope((r) => r.peak),
      };
    });
    const mib = (v: number) => round(v / MiB);
    const table: Table = {
      title: `Memory at the drained steady state (every key reconciled, queue empty, ${IDLE_MS / 1000} s idle), each BackupJob with its CronJob; MiB`,
      columns: [
        { key: 'objects', label: 'BackupJobs' },
        { key: 'system', label: 'system' },
        { key: 'process', label: 'process' },
        { key: 'rss', label: 'RSS' },
        { key: 'rssScraped', label: 'RSS after a scrape' },
        { key: 'heap', label: 'heap used' },
        { key: 'heapTotal', label: 'heap committed' },
        { key: 'external', label: 'external' },
        { key: 'rssGc', label: 'RSS after GC' },
        { key: 'heapGc', label: 'heap after GC' },
        { key: 'peak', label: 'peak RSS (first pass)' },
      ],
      rows: rows.map((r) => ({
        objects: r.objects,
        system: r.system,
        process: r.process,
        rss: mib(r.rss),
        rssScraped: mib(r.rssScraped),
        heap: mib(r.heapUsed),
        heapTotal: mib(r.heapTotal),
        external: mib(r.external),
        rssGc: mib(r.gc.rss),
        heapGc: mib(r.gc.heapUsed),
        peak: mib(r.peak),
      })),
    };
    const marginal: Table = {
      title: `Bytes per BackupJob: (at ${large} − at ${small}) ÷ ${large - small}`,
      columns: [
        { key: 'kind', label: 'system / process' },
        { key: 'rss', label: 'RSS' },
        { key: 'rssScraped', label: 'RSS after a scrape' },
        { key: 'heap', label: 'heap used' },
        { key: 'rssGc', label: 'RSS after GC' },
        { key: 'heapGc', label: 'heap after GC' },
        { key: 'peak', label: 'peak RSS' },
      ],
      rows: perObject.map((p) => ({
        kind: p.kind,
        rss: Math.round(p.rss),
        rssScraped: Math.round(p.rssScraped),
        heap: Math.round(p.heap),
        rssGc: Math.round(p.rssGc),
        heapGc: Math.round(p.heapGc),
        peak: Math.round(p.peak),
      })),
    };
    const watcher = perObject.find((p) => p.kind.endsWith('/watcher'));
    const kib = (v: number) => `${round(v / KiB, 1)} KiB`;
    const goal = (name: string, target: number, measured: number, detail: string): Goal => ({
      goal: name,
      target: `≤ ${kib(target)}`,
      measured: `${kib(measured)} (${detail})`,
      met: measured <= target,
      note: measured <= target ? undefined : `over by ${kib(measured - target)}`,
    });
    const goals: Goal[] = watcher
      ? [
          goal('watcher heap retained per BackupJob', HEAP_GOAL_BYTES, watcher.heapGc, 'after GC'),
          goal('watcher RSS per BackupJob at steady state', RSS_GOAL_BYTES, watcher.rss, 'idle'),
        ]
      : [];
    return {
      settings: {
        objects: sizes,
        latencyMs: 0,
        operatorWorkers: 1,
        idleMs: IDLE_MS,
      },
      tables: [table, marginal],
      charts: [
        {
          id: 'memory-rss',
          kind: 'bar',
          spec: {
            title: 'Resident memory by process',
            yLabel: 'MiB',
            categories: sizes.map((n) => `${n} BackupJobs`),
            series: kinds.map((k) => ({
              name: k.replace(/ \(c=\d+\)/, ''),
              values: sizes.map((n) =>
                round((rows.find((r) => key(r) === k && r.objects === n)?.rss ?? Number.NaN) / MiB),
              ),
            })),
          },
        },
      ],
      goals,
      notes: [
        'Memory does not depend on API latency, so this scenario runs at 0 ms only. Each system is read at its drained steady state: every key reconciled once after start (the first pass, which is what a resync does), the queue empty and no reconcile running for the idle time. "After GC" is read through the inspector right after two full collections (HeapProfiler.collectGarbage); RSS before it is what the process holds when left alone, read before the bench scrapes /metrics (where the heap figures come from); "RSS after a scrape" is read right after that scrape, whose response on the leading watcher carries every BackupJob’s series. The peak is VmHWM, the highest RSS of the process\'s life: the first pass over every object. The per-object figure is the slope between the two sizes, so fixed costs (code, connections) cancel out.',
      ],
      raw: rows,
    };
  },
};
