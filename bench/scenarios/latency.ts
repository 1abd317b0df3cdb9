import type { Goal, Table } from '../lib/result.js';
import { round, summarize, type Summary } from '../lib/stats.js';
import { waitQuiet } from '../env/measure.js';
import { PREFIX, waitForProgress, withWorld } from '../env/world.js';
import { systemsFor, type Scenario } from './context.js';

/** Converged BackupJobs the system holds while the new ones come, so its caches are warm. */
const WARM_OBJECTS = 100;
const QUIET_MS = 2000;

interface LatencyRun {
  readonly system: string;
  readonly toCronJob: Summary;
  readonly toReady: Summary;
}

/**
 * One new BackupJob at a time into a warm, idle system: creation → CronJob and creation →
 * Ready=True at its generation, as the API server stored them. Each one waits until the one
 * before is Ready and the system is quiet again, so no run shares its time with another.
 */
export const latencyScenario: Scenario = {
  name: 'latency',
  title: 'Latency to Ready: one new BackupJob at a time on a warm system',
  async run(ctx) {
    const { creates, latencyMs, workers } = ctx.size.latency;
    const runs: LatencyRun[] = [];
    for (const spec of systemsFor(ctx, latencyMs, [workers])) {
      runs.push(
        await withWorld({ latencyMs, objects: WARM_OBJECTS, converged: true }, async (emu) => {
          const sys = await spec.start(emu.kubeconfigPath);
          try {
            await waitQuiet(sys, 120_000, QUIET_MS);
            const toCronJob: number[] = [];
            const toReady: number[] = [];
            for (let i = 0; i < creates; i += 1) {
              const from = WARM_OBJECTS + i;
              const { at } = await emu.call('create', { prefix: PREFIX, from, count: 1 });
              await waitForProgress(emu, (p) => p.ready >= from + 1, 30_000, 20);
              const [one] = await emu.call('burst', { since: at });
              if (one) {
                toCronJob.push(one.toCronJob);
                toReady.push(one.toReady);
              }
              await waitQuiet(sys, 30_000, QUIET_MS);
            }
            const run = {
              system: spec.label,
              toCronJob: summarize(toCronJob.filter(Number.isFinite)),
              toReady: summarize(toReady.filter(Number.isFinite)),
            };
            ctx.log(`latency ${spec.label}: create→Ready p50 ${round(run.toReady.p50, 1)} ms`);
            return run;
          } finally {
            await sys.stop();
          }
        }),
      );
    }
    const table: Table = {
      title: `${creates} BackupJobs created one at a time into ${WARM_OBJECTS} converged ones, ${latencyMs} ms mean API latency; ms`,
      columns: [
        { key: 'system', label: 'system' },
        { key: 'n', label: 'creates' },
        { key: 'cjMin', label: 'create→CronJob min' },
        { key: 'cj50', label: 'median' },
        { key: 'rMin', label: 'create→Ready min' },
        { key: 'r50', label: 'median' },
        { key: 'rMax', label: 'max' },
      ],
      rows: runs.map((r) => ({
        system: r.system,
        n: r.toReady.count,
        cjMin: round(r.toCronJob.min, 1),
        cj50: round(r.toCronJob.p50, 1),
        rMin: round(r.toReady.min, 1),
        r50: round(r.toReady.p50, 1),
        rMax: round(r.toReady.max, 1),
      })),
    };
    return {
      settings: { creates, latencyMs, workers, warmObjects: WARM_OBJECTS },
      tables: [table],
      goals: goals(runs, latencyMs),
      notes: [
        'The writes before Ready are the finalizer patch, the CronJob create and the status patch, one after another (docs/reconciler.md, Write order); the CronJobCreated Event goes out beside the status patch. Each request waits the injected latency (±25 %) in the API server.',
      ],
      raw: runs,
    };
  },
};

function goals(runs: readonly LatencyRun[], latencyMs: number): Goal[] {
  const operator = runs.find((r) => r.system.startsWith('operator'));
  if (!operator) return [];
  const target = 2 * latencyMs + 10;
  const measured = operator.toReady.p50;
  return [
    {
      goal: 'Latency to Ready of one new BackupJob on a warm system',
      target: `≤ 2 API round trips + 10 ms (${target} ms at ${latencyMs} ms)`,
      measured: `${round(measured, 1)} ms median`,
      met: measured <= target,
      note:
        measured <= target
          ? undefined
          : 'Three writes must precede Ready in order: the finalizer before any child, the status after the CronJob it reports (see the note).',
    },
  ];
}
