import { round } from '../lib/stats.js';
import { totals } from '../lib/redis-stats.js';
import type { Table } from '../lib/result.js';
import { redisCommands } from '../env/measure.js';
import { coldStart, type ColdStartRun } from './cold-start.js';
import { operatorSpec, type BenchContext, type Scenario, type SystemSpec } from './context.js';
import { resyncingWatcherEnv, steady, type SteadyRun } from './steady.js';
import { REDIS_MODES, type RedisMode } from '#testing';

const MODE_LABELS: Record<RedisMode, string> = {
  standalone: 'one server',
  cluster: 'Cluster, 3 primaries',
  sentinel: 'Sentinel, primary + 1 replica',
};

/** Production's shard count, so that the shards spread over the three primaries. */
const SHARDS = 16;

interface ResyncRun {
  readonly seconds: number;
  readonly reconciles: number;
  readonly commands: { total: number; scripts: number };
  readonly byCommand: Record<string, number>;
}

interface ModeRun {
  readonly redis: RedisMode;
  readonly system: string;
  readonly coldStart: ColdStartRun;
  /** Redis commands (and script calls among them) per BackupJob over the whole cold start. */
  readonly coldStartCommands: { total: number; scripts: number };
  readonly resync: ResyncRun;
}

/** The cold start, with the Redis commands of the whole run counted beside its throughput. */
async function measuredColdStart(
  ctx: BenchContext,
  spec: SystemSpec,
): Promise<{ run: ColdStartRun; commands: { total: number; scripts: number } }> {
  const { objects, latencyMs } = ctx.size.redisCluster;
  let commands = { total: 0, scripts: 0 };
  const counting: SystemSpec = {
    ...spec,
    async start(kubeconfigPath, options) {
      const sys = await spec.start(kubeconfigPath, options);
      return {
        ...sys,
        async stop() {
          // The commands of the whole run (its Redis is its own), read before it goes away.
          commands = totals(await redisCommands(sys));
          await sys.stop();
        },
      };
    },
  };
  const run = await coldStart(ctx, counting, objects, latencyMs, 600);
  return { run, commands };
}

function resyncOf(run: SteadyRun): ResyncRun {
  const w = run.window;
  return {
    seconds: run.resyncSeconds,
    reconciles: w.reconciles,
    commands: totals(w.redisCommands),
    byCommand: w.redisCommands,
  };
}

export const redisClusterScenario: Scenario = {
  name: 'redis-cluster',
  title: 'One redis-server against a 3-primary Redis Cluster and Sentinel on the same machine',
  async run(ctx) {
    const { objects, workers, latencyMs } = ctx.size.redisCluster;
    const runs: ModeRun[] = [];
    if (ctx.systems.has('operator')) {
      for (const redis of REDIS_MODES) {
        const spec = operatorSpec(ctx, workers, {
          redis,
          shards: SHARDS,
          watcherEnv: resyncingWatcherEnv(ctx),
        });
        const cold = await measuredColdStart(ctx, spec);
        const pass = resyncOf(await steady(ctx, spec, latencyMs, objects));
        ctx.log(
          `redis ${redis}: cold start ${cold.run.perSecond}/s, ${round(cold.commands.total / objects)} cmds/object; resync ${round(pass.commands.total / objects)} cmds/key`,
        );
        runs.push({
          redis,
          system: spec.label,
          coldStart: cold.run,
          coldStartCommands: cold.commands,
          resync: pass,
        });
      }
    }
    const perObject = (n: number) => round(n / objects, 3);
    const table: Table = {
      title: `${objects} BackupJobs, ${workers} workers × ${ctx.size.workerConcurrency}, ${SHARDS} shards, API latency ${latencyMs} ms`,
      columns: [
        { key: 'redis', label: 'Redis' },
        { key: 'coldSeconds', label: 'cold start (s)' },
        { key: 'perSecond', label: 'objects/s after start' },
        { key: 'coldCommands', label: 'Redis cmds/object, cold start (scripts)' },
        { key: 'resyncSeconds', label: 'resync (s)' },
        { key: 'resyncCommands', label: 'Redis cmds/key, resync (scripts)' },
        { key: 'redisCores', label: 'Redis cores, cold start' },
      ],
      rows: runs.map((r) => {
        const c = r.coldStart;
        return {
          redis: MODE_LABELS[r.redis],
          coldSeconds: c.finished ? c.seconds : `${c.seconds} (capped)`,
          perSecond: c.perSecond,
          coldCommands: `${perObject(r.coldStartCommands.total)} (${perObject(r.coldStartCommands.scripts)})`,
          resyncSeconds: round(r.resync.seconds),
          resyncCommands: `${perObject(r.resync.commands.total)} (${perObject(r.resync.commands.scripts)})`,
          redisCores: round((c.cpu.redis ?? 0) / Math.max(0.001, c.seconds)),
        };
      }),
    };
    return {
      settings: {
        objects,
        workers,
        workerConcurrency: ctx.size.workerConcurrency,
        shards: SHARDS,
        latencyMs,
      },
      tables: [table],
      notes: [
        'All on one machine: the Cluster cannot be faster here, it shows what the cross-slot design costs (per-slot pipelines, per-key snapshot commands, a client per primary).',
        "The cold start is timed from starting the Redis deployment, so it includes a Cluster's or Sentinel's own bootstrap (seconds); objects/s after start compares the modes. The resync is the watcher’s periodic one (RESYNC_PERIOD as in the steady scenario), timed as there: from its log line until every key was reconciled or skipped as proven converged; its commands per key include the idle wait before it.",
        "Sentinel runs a primary with one replica: a consumer's claim of a key and a producer's adds wait for the replica's acknowledgement (WAIT) before they count, and the replica's CPU is counted; commands are the primary's.",
      ],
      raw: { runs },
    };
  },
};
