import type { Goal, Table } from '../lib/result.js';
import { round } from '../lib/stats.js';
import { totals } from '../lib/redis-stats.js';
import {
  serverWrites,
  snapshot,
  waitForReconciles,
  windowOf,
  type Window,
} from '../env/measure.js';
import { withWorld } from '../env/world.js';
import { operatorSpec, type Scenario } from './context.js';

const SSAR = 'create authorization.k8s.io/selfsubjectaccessreviews';
/** The default GRANT_RECHECK_INTERVAL and a fleet size the cost is stated for. */
const DEFAULT_INTERVAL_S = 300;
const FLEET = 10_000;

interface RecheckRun {
  readonly objects: number;
  readonly intervalSeconds: number;
  readonly firstPassCompleted: boolean;
  readonly window: Window;
}

/**
 * What the periodic grant re-check costs: N converged BackupJobs, each naming a Secret of its
 * own (so no answer is shared and every re-check asks the API server), the operator started with
 * a short GRANT_RECHECK_INTERVAL; after the first pass, one interval is measured, in which every
 * key is re-checked once and nothing else happens.
 */
export const grantRecheckScenario: Scenario = {
  name: 'grant-recheck',
  title: 'Grant re-check: what looking at every BackupJob that uses a Secret again costs',
  async run(ctx) {
    const { objects, workers, intervalSeconds, latencyMs } = ctx.size.grantRecheck;
    const settings = { objects, operatorWorkers: workers, intervalSeconds, latencyMs };
    if (!ctx.systems.has('operator')) return { settings, tables: [] };
    const spec = operatorSpec(ctx, workers, {
      workerEnv: { GRANT_RECHECK_INTERVAL: `${intervalSeconds}s` },
    });
    const run = await withWorld(
      { latencyMs, objects, converged: true, secretRef: true },
      async (emu): Promise<RecheckRun> => {
        const sys = await spec.start(emu.kubeconfigPath);
        try {
          const firstPassCompleted = await waitForReconciles(sys, objects, 600_000);
          const from = await snapshot(sys, emu);
          await new Promise((r) => setTimeout(r, intervalSeconds * 1000));
          const window = windowOf(from, await snapshot(sys, emu));
          ctx.log(
            `grant-recheck ${objects} every ${intervalSeconds}s: ${window.reconciles} reconciles, ${JSON.stringify(window.requests)}`,
          );
          return { objects, intervalSeconds, firstPassCompleted, window };
        } finally {
          await sys.stop();
        }
      },
    );
    const w = run.window;
    const rechecks = w.reconciles;
    // Counted at the API server: the reviews are questions, and Leases are the watcher's own.
    const written = serverWrites(w.requests, [
      'authorization.k8s.io/selfsubjectaccessreviews',
      'coordination.k8s.io/leases',
    ]);
    const per = (n: number) => (rechecks > 0 ? n / rechecks : Number.NaN);
    const redis = totals(w.redisCommands);
    const cpuMs = per((w.cpu.operator ?? 0) + (w.cpu.redis ?? 0) + (w.cpu.emulator ?? 0)) * 1000;
    const ssar = per(w.requests[SSAR] ?? 0);
    const fleetRate = FLEET / DEFAULT_INTERVAL_S;
    const table: Table = {
      title: `One GRANT_RECHECK_INTERVAL (${intervalSeconds} s) over ${objects} converged BackupJobs, each with an opted-in Secret of its own`,
      columns: [
        { key: 'seconds', label: 'window (s)' },
        { key: 'reconciles', label: 'reconciles' },
        { key: 'perObject', label: 'reconciles per BackupJob' },
        { key: 'rate', label: 'reconciles/s' },
        { key: 'ssar', label: 'SSARs per re-check' },
        { key: 'writes', label: 'writes (reviews aside)' },
        { key: 'redis', label: 'Redis cmds per re-check' },
        { key: 'cpuMs', label: 'CPU ms per re-check (operator + Redis + emulator)' },
        { key: 'cpu', label: 'CPU s per process' },
      ],
      rows: [
        {
          seconds: round(w.seconds),
          reconciles: rechecks,
          perObject: round(rechecks / objects, 3),
          rate: round(rechecks / w.seconds, 1),
          ssar: round(ssar, 3),
          writes: written,
          redis: round(per(redis.total), 1),
          cpuMs: round(cpuMs, 2),
          cpu: Object.entries(w.cpu)
            .map(([k, v]) => `${k} ${round(v)}`)
            .join(', '),
        },
      ],
    };
    const fleet: Table = {
      title: `Derived: ${FLEET} such BackupJobs at the default interval (${DEFAULT_INTERVAL_S / 60} min)`,
      columns: [
        { key: 'rate', label: 're-checks/s' },
        { key: 'ssar', label: 'SSARs/s (none shared)' },
        { key: 'cores', label: 'CPU cores (operator + Redis + API server)' },
        { key: 'redis', label: 'Redis cmds/s' },
      ],
      rows: [
        {
          rate: round(fleetRate, 1),
          ssar: round(fleetRate * ssar, 1),
          cores: round((fleetRate * cpuMs) / 1000, 3),
          redis: round(fleetRate * per(redis.total), 0),
        },
      ],
    };
    const goals: Goal[] = [
      {
        goal: 'a re-check of an unchanged world writes nothing',
        target: '0 writes in one interval of re-checks',
        measured: `${written} writes in ${rechecks} reconciles`,
        met: written === 0 && run.firstPassCompleted,
        note: run.firstPassCompleted ? undefined : 'the first pass did not end within 600 s',
      },
    ];
    return {
      settings,
      tables: [table, fleet],
      goals,
      notes: [
        'Every BackupJob names a Secret of its own, so no cached answer is shared: each re-check asks one SelfSubjectAccessReview once the 30 s cache has expired. BackupJobs that share a Secret in a namespace share its answer within a worker.',
        'The window starts when the first pass (the new leader enqueuing every key) has reconciled every key, so it holds the re-checks alone, plus the few backups falling due by their schedules.',
        "The emulator's CPU stands in for the API server's work for the SelfSubjectAccessReviews; a real API server's cost per review differs.",
      ],
      raw: run,
    };
  },
};
