import type { Table } from '../lib/result.js';
import { snapshot, waitQuiet, windowOf } from '../env/measure.js';
import { PREFIX, waitForProgress, withWorld } from '../env/world.js';
import { systemsFor, type Scenario } from './context.js';

export const coalescingScenario: Scenario = {
  name: 'coalescing',
  title: 'Coalescing: many updates to one object within a second',
  async run(ctx) {
    const { updates, windowMs } = ctx.size.coalescing;
    const rows: {
      latency: string;
      system: string;
      updates: number;
      reconciles: number;
      perReconcile: number;
      converged: string;
    }[] = [];
    for (const latencyMs of ctx.size.latencies) {
      for (const spec of systemsFor(ctx, latencyMs, [ctx.size.burst.workers])) {
        rows.push(
          await withWorld({ latencyMs, objects: 1, converged: true }, async (emu) => {
            const sys = await spec.start(emu.kubeconfigPath);
            try {
              await waitQuiet(sys, 60_000);
              const before = await snapshot(sys, emu);
              await emu.call('hammer', { name: `${PREFIX}-0`, updates, windowMs });
              const { finished } = await waitForProgress(emu, (p) => p.ready === 1, 30_000);
              await waitQuiet(sys, 30_000);
              const w = windowOf(before, await snapshot(sys, emu));
              ctx.log(
                `coalescing ${latencyMs}ms ${spec.label}: ${updates} updates → ${w.reconciles} reconciles`,
              );
              return {
                latency: `${latencyMs} ms`,
                system: spec.label,
                updates,
                reconciles: w.reconciles,
                perReconcile: Math.round((updates / Math.max(1, w.reconciles)) * 10) / 10,
                converged: finished ? 'yes' : 'no',
              };
            } finally {
              await sys.stop();
            }
          }),
        );
      }
    }
    const table: Table = {
      title: `${updates} spec updates to one BackupJob, evenly within ${windowMs} ms`,
      columns: [
        { key: 'latency', label: 'API latency' },
        { key: 'system', label: 'system' },
        { key: 'updates', label: 'updates' },
        { key: 'reconciles', label: 'reconciles' },
        { key: 'perReconcile', label: 'updates per reconcile' },
        { key: 'converged', label: 'final generation observed' },
      ],
      rows,
    };
    return {
      settings: {
        updates,
        windowMs,
        latenciesMs: ctx.size.latencies,
        operatorWorkers: ctx.size.burst.workers,
      },
      tables: [table],
      notes: [
        "Updates coalesce only while the key waits: a key being reconciled runs once more after the current run, so the count of reconciles is about the update window divided by one reconcile's duration, plus one.",
      ],
      raw: rows,
    };
  },
};
