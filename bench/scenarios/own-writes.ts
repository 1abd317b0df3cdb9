import type { Table } from '../lib/result.js';
import { round } from '../lib/stats.js';
import { totals } from '../lib/redis-stats.js';
import { snapshot, waitQuiet, windowOf, writes, type Window } from '../env/measure.js';
import { PREFIX, waitForProgress, withWorld } from '../env/world.js';
import { systemsFor, type Scenario } from './context.js';

/** Changes per second: slow enough that changes of one object rarely coalesce. */
const RATE = 20;
/** Long enough after the last change for every settled verifying run to have run and ended. */
const QUIET_MS = 3000;

interface OwnWritesRun {
  readonly system: string;
  readonly changes: number;
  readonly window: Window;
}

/**
 * What the verifying runs cost: on converged BackupJobs, spec changes at a pace where each is its
 * own reconcile; the window ends once the system was quiet for 3 s, so it holds the runs the
 * operator's own writes bring back after they settle. Reported per change: reconciles, API
 * requests and writes, Redis commands.
 */
export const ownWritesScenario: Scenario = {
  name: 'own-writes',
  title:
    "Own writes: what one spec change costs, the verifying run after the operator's writes included",
  async run(ctx) {
    const { objects, workers } = ctx.size.ownWrites;
    const latencyMs = 5;
    const runs: OwnWritesRun[] = [];
    for (const spec of systemsFor(ctx, latencyMs, [workers])) {
      runs.push(
        await withWorld({ latencyMs, objects, converged: true }, async (emu) => {
          const sys = await spec.start(emu.kubeconfigPath);
          try {
            await waitQuiet(sys, 300_000, QUIET_MS);
            const before = await snapshot(sys, emu);
            const { sent } = await emu.call('churn', {
              prefix: PREFIX,
              count: objects,
              rate: RATE,
              durationMs: (objects / RATE) * 1000,
            });
            await waitForProgress(emu, (p) => p.pendingChanges === 0, 60_000, 200);
            await waitQuiet(sys, 60_000, QUIET_MS);
            const window = windowOf(before, await snapshot(sys, emu));
            ctx.log(`own-writes ${spec.label}: ${sent} changes, ${window.reconciles} reconciles`);
            return { system: spec.label, changes: sent, window };
          } finally {
            await sys.stop();
          }
        }),
      );
    }
    const per = (n: number, run: OwnWritesRun) => round(n / Math.max(1, run.changes), 2);
    const table: Table = {
      title: `${objects} converged BackupJobs, random spec changes at ${RATE}/s at ${latencyMs} ms API latency; per change, until quiet`,
      columns: [
        { key: 'system', label: 'system' },
        { key: 'changes', label: 'changes' },
        { key: 'reconciles', label: 'reconciles per change' },
        { key: 'requests', label: 'API requests per change' },
        { key: 'writes', label: 'writes per change' },
        { key: 'redis', label: 'Redis commands per change' },
        { key: 'cpuMs', label: 'operator CPU ms per change' },
      ],
      rows: runs.map((run) => {
        const w = run.window;
        const requests = Object.entries(w.requestsByVerb)
          .filter(([verb]) => verb !== 'watch')
          .reduce((a, [, n]) => a + n, 0);
        return {
          system: run.system,
          changes: run.changes,
          reconciles: per(w.reconciles, run),
          requests: per(requests, run),
          writes: per(writes(w), run),
          redis: per(totals(w.redisCommands).total, run),
          cpuMs: per((w.cpu.operator ?? 0) * 1000, run),
        };
      }),
    };
    return {
      settings: { objects, workers, rate: RATE, latencyMs },
      tables: [table],
      notes: [
        "The operator runs each key once more after its own writes settled (1 s without a further change), so that a run never stays decided on a snapshot older than its own last write; that run reads the snapshot, finds nothing to do and writes nothing. The baseline's second reconcile comes from its CronJob's update event.",
        'Requests leave out watches; the Lease renewals of the window are in them.',
      ],
      raw: runs,
    };
  },
};
