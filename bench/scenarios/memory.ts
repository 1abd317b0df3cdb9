import { round } from '../lib/stats.js';
import type { Goal, Table } from '../lib/result.js';
import { memory } from '../lib/proc.js';
import { scrape, sumOf } from '../lib/prom.js';
import { snapshot, total } from '../env/measure.js';
import { EmulatorHandle } from '../env/emulator.js';
import { PREFIX } from '../env/world.js';
import { bestBaseline, operatorSpec, type Scenario, type SystemSpec } from './context.js';

interface MemoryRow {
  readonly objects: number;
  readonly system: string;
  readonly process: string;
  readonly rss: number;
  readonly heapUsed: number;
  /** V8's committed heap: above heapUsed by what a peak left reserved. */
  readonly heapTotal: number;
  /** Memory outside the V8 heap that JS objects hold (Buffers, ArrayBuffers). */
  readonly external: number;
}

const MiB = 2 ** 20;
const WATCHER_GOAL_BYTES = 10 * 1024;
// Let the post-sync garbage settle before reading RSS.
const SETTLE_MS = 5000;
const WARM_RECONCILES = 2000;

async function measure(
  spec: SystemSpec,
  emu: EmulatorHandle,
  objects: number,
): Promise<MemoryRow[]> {
  const sys = await spec.start(emu.kubeconfigPath);
  try {
    // Started means listed and synced; a few thousand reconciles warm the workers up. Waiting for
    // the whole first pass would add minutes at 50k and change nothing the watcher holds.
    const deadline = Date.now() + 300_000;
    const warm = Math.min(objects, WARM_RECONCILES);
    while (
      Date.now() < deadline &&
      total(await snapshot(sys, emu), 'controller_runtime_reconcile_total') < warm
    ) {
      await new Promise((r) => setTimeout(r, 500));
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return await Promise.all(
      sys.processes.map(async (p) => {
        const metrics = await scrape(p.metricsUrl).catch(() => []);
        return {
          objects,
          system: spec.label,
          process: p.role,
          rss: memory(p.proc.child.pid ?? 0).rss,
          heapUsed: sumOf(metrics, 'nodejs_heap_size_used_bytes'),
          heapTotal: sumOf(metrics, 'nodejs_heap_size_total_bytes'),
          external: sumOf(metrics, 'nodejs_external_memory_bytes'),
        };
      }),
    );
  } finally {
    await sys.stop();
  }
}

export const memoryScenario: Scenario = {
  name: 'memory',
  title: 'Memory: resident set at 10k and 50k BackupJobs',
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
      const avg = (xs: MemoryRow[], f: (r: MemoryRow) => number) =>
        xs.reduce((s, r) => s + f(r), 0) / Math.max(1, xs.length);
      return {
        kind: k,
        rss: (avg(b, (r) => r.rss) - avg(a, (r) => r.rss)) / (large - small),
        heap: (avg(b, (r) => r.heapUsed) - avg(a, (r) => r.heapUsed)) / (large - small),
      };
    });
    const table: Table = {
      title: `Resident memory after the initial sync and ${WARM_RECONCILES} reconciles, each BackupJob with its CronJob`,
      columns: [
        { key: 'objects', label: 'BackupJobs' },
        { key: 'system', label: 'system' },
        { key: 'process', label: 'process' },
        { key: 'rss', label: 'RSS (MiB)' },
        { key: 'heap', label: 'V8 heap used (MiB)' },
        { key: 'heapTotal', label: 'V8 heap committed (MiB)' },
        { key: 'external', label: 'external (MiB)' },
      ],
      rows: rows.map((r) => ({
        objects: r.objects,
        system: r.system,
        process: r.process,
        rss: round(r.rss / MiB),
        heap: round(r.heapUsed / MiB),
        heapTotal: round(r.heapTotal / MiB),
        external: round(r.external / MiB),
      })),
    };
    const marginal: Table = {
      title: `Bytes per BackupJob: (at ${large} − at ${small}) ÷ ${large - small}`,
      columns: [
        { key: 'kind', label: 'system / process' },
        { key: 'rss', label: 'RSS bytes per object' },
        { key: 'heap', label: 'heap bytes per object' },
      ],
      rows: perObject.map((p) => ({
        kind: p.kind,
        rss: Math.round(p.rss),
        heap: Math.round(p.heap),
      })),
    };
    const watcher = perObject.find((p) => p.kind.endsWith('/watcher'));
    const goals: Goal[] = watcher
      ? [
          {
            goal: 'watcher resident memory per BackupJob',
            target: '≤ 10 KiB',
            measured: `${round(watcher.rss / 1024)} KiB (RSS), ${round(watcher.heap / 1024)} KiB (heap)`,
            met: watcher.rss <= WATCHER_GOAL_BYTES,
            note:
              watcher.rss <= WATCHER_GOAL_BYTES
                ? undefined
                : `over by ${round((watcher.rss - WATCHER_GOAL_BYTES) / 1024)} KiB`,
          },
        ]
      : [];
    return {
      settings: {
        objects: sizes,
        latencyMs: 0,
        operatorWorkers: 1,
        measuredAfterReconciles: WARM_RECONCILES,
        settleMs: SETTLE_MS,
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
        'Memory does not depend on API latency, so this scenario runs at 0 ms only. The watcher is measured after its initial list and enqueue-all; a worker holds no cache, so it is measured while it works through that pass at full speed (its RSS is then mostly garbage not yet collected, not objects it keeps). The per-object figure is the slope between the two sizes, so fixed costs (code, connections) cancel out.',
      ],
      raw: rows,
    };
  },
};
