import { Redis } from 'ioredis';
import { round } from '../lib/stats.js';
import type { Goal, Table } from '../lib/result.js';
import { snapshot, total, waitQuiet } from '../env/measure.js';
import { withWorld } from '../env/world.js';
import { operatorSpec, type Scenario } from './context.js';

const JOBS_PER_OBJECT = 3;
const SAMPLE_KEYS = 500;
const KiB = 1024;

interface RedisMemoryRow {
  readonly objects: number;
  readonly snapshots: number;
  readonly jobsPerSnapshot: number;
  /** MEMORY USAGE of one snapshot key, mean over a sample. */
  readonly snapshotBytes: number;
  /** used_memory − used_memory_startup, per BackupJob: snapshots, queue entries, overheads. */
  readonly redisBytesPerObject: number;
  readonly usedMemory: number;
}

async function countSnapshots(redis: Redis): Promise<string[]> {
  const keys: string[] = [];
  const stream = redis.scanStream({ match: '*:snapshot:*', count: 1000 });
  for await (const batch of stream as AsyncIterable<string[]>) keys.push(...batch);
  return keys;
}

function infoField(info: string, field: string): number {
  return Number(new RegExp(`^${field}:(\\d+)`, 'm').exec(info)?.[1] ?? Number.NaN);
}

/**
 * Redis memory per BackupJob once converged: N BackupJobs, each with its CronJob and three
 * finished Jobs, the operator (watcher + one worker) started and through its first pass.
 */
export const redisMemoryScenario: Scenario = {
  name: 'redis-memory',
  title: 'Redis memory per BackupJob (its CronJob and three Jobs in the snapshot)',
  async run(ctx) {
    const rows: RedisMemoryRow[] = [];
    if (ctx.systems.has('operator')) {
      for (const objects of ctx.size.redisMemory.objects) {
        rows.push(
          await withWorld(
            { latencyMs: 0, objects, converged: true, jobsPerObject: JOBS_PER_OBJECT },
            async (emu) => {
              const sys = await operatorSpec(ctx, 1).start(emu.kubeconfigPath);
              const redis = sys.redis!.client() as Redis;
              try {
                const deadline = Date.now() + 300_000;
                while (Date.now() < deadline) {
                  const done = total(
                    await snapshot(sys, emu),
                    'controller_runtime_reconcile_total',
                  );
                  if (done >= objects) break;
                  await new Promise((r) => setTimeout(r, 500));
                }
                await waitQuiet(sys, 60_000, 1000);
                const keys = await countSnapshots(redis);
                const sample = keys.slice(0, SAMPLE_KEYS);
                const sizes = await Promise.all(
                  sample.map((k) => redis.memory('USAGE', k, 'SAMPLES', 0)),
                );
                const first = JSON.parse((await redis.get(sample[0] ?? '')) ?? '{"jobs":[]}') as {
                  jobs: unknown[];
                };
                const info = await redis.info('memory');
                const used = infoField(info, 'used_memory');
                const row: RedisMemoryRow = {
                  objects,
                  snapshots: keys.length,
                  jobsPerSnapshot: first.jobs.length,
                  snapshotBytes: Math.round(
                    sizes.reduce((a: number, b) => a + Number(b ?? 0), 0) /
                      Math.max(1, sizes.length),
                  ),
                  redisBytesPerObject: Math.round(
                    (used - infoField(info, 'used_memory_startup')) / objects,
                  ),
                  usedMemory: used,
                };
                ctx.log(
                  `redis memory ${objects}: ${row.snapshots} snapshots of ${row.snapshotBytes} B, ${row.redisBytesPerObject} B of Redis per BackupJob`,
                );
                return row;
              } finally {
                redis.disconnect();
                await sys.stop();
              }
            },
          ),
        );
      }
    }
    const table: Table = {
      title: `Redis after the first pass over N converged BackupJobs, each with its CronJob and ${JOBS_PER_OBJECT} finished Jobs (operator 1w)`,
      columns: [
        { key: 'objects', label: 'N' },
        { key: 'snapshots', label: 'snapshot keys' },
        { key: 'jobs', label: 'Jobs in a snapshot' },
        { key: 'snapshotKiB', label: 'one snapshot (KiB, MEMORY USAGE)' },
        { key: 'perObjectKiB', label: 'Redis per BackupJob (KiB, used_memory)' },
        { key: 'usedMiB', label: 'used_memory (MiB)' },
      ],
      rows: rows.map((r) => ({
        objects: r.objects,
        snapshots: r.snapshots,
        jobs: r.jobsPerSnapshot,
        snapshotKiB: round(r.snapshotBytes / KiB, 2),
        perObjectKiB: round(r.redisBytesPerObject / KiB, 2),
        usedMiB: round(r.usedMemory / KiB / KiB, 1),
      })),
    };
    const goals: Goal[] = rows.map((r) => ({
      goal: `one snapshot per BackupJob, with its Jobs (N=${r.objects})`,
      target: `${r.objects} snapshot keys, ${JOBS_PER_OBJECT} Jobs each`,
      measured: `${r.snapshots} keys, ${r.jobsPerSnapshot} Jobs in the first`,
      met: r.snapshots === r.objects && r.jobsPerSnapshot === JOBS_PER_OBJECT,
    }));
    return {
      settings: { objects: ctx.size.redisMemory.objects, jobsPerObject: JOBS_PER_OBJECT },
      tables: [table],
      goals,
      notes: [
        'used_memory − used_memory_startup counts everything the operator keeps in Redis: the snapshots, the queue (each converged BackupJob waits there with its RequeueAfter for the next due backup) and Redis’ own per-key overhead. docs/operations.md turns it into a sizing rule.',
      ],
      raw: rows,
    };
  },
};
