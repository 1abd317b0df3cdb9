import type { Table } from '../lib/result.js';
import { summarize, type Summary } from '../lib/stats.js';
import { PREFIX, waitForProgress, withWorld } from '../env/world.js';
import {
  bestBaseline,
  operatorSpec,
  type BenchContext,
  type Scenario,
  type SystemSpec,
} from './context.js';

interface BurstRun {
  readonly latencyMs: number;
  readonly system: string;
  readonly objects: number;
  readonly finished: boolean;
  readonly toCronJob: Summary;
  readonly toReady: Summary;
}

const r0 = (v: number) => Math.round(v);

async function burst(
  ctx: BenchContext,
  spec: SystemSpec,
  objects: number,
  latencyMs: number,
): Promise<BurstRun> {
  return withWorld({ latencyMs }, async (emu) => {
    const sys = await spec.start(emu.kubeconfigPath);
    try {
      const { at } = await emu.call('create', { prefix: PREFIX, from: 0, count: objects });
      const { finished } = await waitForProgress(
        emu,
        (p) => p.ready >= objects,
        ctx.size.coldStart.capSeconds * 1000,
        200,
      );
      const lat = await emu.call('burst', { since: at });
      const run = {
        latencyMs,
        system: spec.label,
        objects,
        finished,
        toCronJob: summarize(lat.map((l) => l.toCronJob).filter(Number.isFinite)),
        toReady: summarize(lat.map((l) => l.toReady).filter(Number.isFinite)),
      };
      ctx.log(
        `burst ${objects} ${latencyMs}ms ${spec.label}: ready p50 ${r0(run.toReady.p50)} p99 ${r0(run.toReady.p99)} ms`,
      );
      return run;
    } finally {
      await sys.stop();
    }
  });
}

export const burstScenario: Scenario = {
  name: 'burst',
  title: 'Burst: BackupJobs created at once into a running operator',
  async run(ctx) {
    const { objects, workers } = ctx.size.burst;
    const runs: BurstRun[] = [];
    for (const latencyMs of ctx.size.latencies) {
      // Concurrency 1 would need minutes per burst; the cold start measures it.
      const specs: SystemSpec[] = [];
      if (ctx.systems.has('operator')) specs.push(operatorSpec(ctx, workers));
      if (ctx.systems.has('baseline')) specs.push(bestBaseline(ctx, latencyMs));
      for (const spec of specs) runs.push(await burst(ctx, spec, objects, latencyMs));
    }
    const table: Table = {
      title: `Latency from creation (all ${objects} in one go) to the CronJob and to Ready=True, ms`,
      columns: [
        { key: 'latency', label: 'API latency' },
        { key: 'system', label: 'system' },
        { key: 'cj50', label: 'create→CronJob p50' },
        { key: 'cj95', label: 'p95' },
        { key: 'cj99', label: 'p99' },
        { key: 'r50', label: 'create→Ready p50' },
        { key: 'r95', label: 'p95' },
        { key: 'r99', label: 'p99' },
        { key: 'ratio', label: 'p99 Ready ÷ baseline best' },
        { key: 'done', label: 'all Ready' },
      ],
      rows: runs.map((r) => {
        const base = runs.find(
          (b) => b.latencyMs === r.latencyMs && b.system.startsWith('baseline best'),
        );
        return {
          latency: `${r.latencyMs} ms`,
          system: r.system,
          cj50: r0(r.toCronJob.p50),
          cj95: r0(r.toCronJob.p95),
          cj99: r0(r.toCronJob.p99),
          r50: r0(r.toReady.p50),
          r95: r0(r.toReady.p95),
          r99: r0(r.toReady.p99),
          ratio: base ? Math.round((r.toReady.p99 / base.toReady.p99) * 100) / 100 : null,
          done: r.finished ? 'yes' : `no (${r.toReady.count})`,
        };
      }),
    };
    const latencies = [...new Set(runs.map((r) => r.latencyMs))];
    const systems = [...new Set(runs.map((r) => r.system.replace(/ \(c=\d+\)/, '')))];
    return {
      settings: {
        objects,
        operatorWorkers: workers,
        workerConcurrency: ctx.size.workerConcurrency,
        latenciesMs: ctx.size.latencies,
      },
      tables: [table],
      charts: [
        {
          id: 'burst-p99',
          kind: 'bar',
          spec: {
            title: `Burst of ${objects}: p99 create→Ready`,
            yLabel: 'ms',
            categories: latencies.map((l) => `${l} ms API latency`),
            series: systems.map((s) => ({
              name: s,
              values: latencies.map(
                (l) =>
                  runs.find((r) => r.latencyMs === l && r.system.replace(/ \(c=\d+\)/, '') === s)
                    ?.toReady.p99 ?? Number.NaN,
              ),
            })),
          },
        },
      ],
      raw: runs,
    };
  },
};
