import { EnvReader, type Env } from './env-reader.js';
import { readCommonConfig, type CommonConfig, type ConfigSources } from './common.js';

export interface WorkerConfig extends CommonConfig {
  readonly app: 'worker';
  /** Reconciles this process runs at once (controller-runtime MaxConcurrentReconciles). */
  readonly concurrency: number;
  /** The shards this worker consumes, sorted; all of 0..QUEUE_SHARDS-1 when WORKER_SHARDS is empty. */
  readonly shards: readonly number[];
  /** Image of the backup container in the CronJobs the operator creates, unless a BackupJob names one. */
  readonly backupImage: string;
  /** Image patterns a BackupJob's spec.image may name besides backupImage (BACKUP_IMAGE_ALLOWLIST). */
  readonly allowedImages: readonly string[];
  /**
   * How often a BackupJob that uses an opted-in Secret or claim is looked at again
   * (GRANT_RECHECK_INTERVAL): a withdrawn grant makes no event, so this bounds how long it goes
   * unnoticed, together with grantCacheTtlMs.
   */
  readonly grantRecheckMs: number;
  /** How long a worker reuses an answer about a grant (GRANT_CACHE_TTL). */
  readonly grantCacheTtlMs: number;
}

export const DEFAULT_BACKUP_IMAGE = 'ghcr.io/example/backupjob-backup:0.1.0';

/** Parses and validates the worker's environment; throws ConfigError naming every bad variable. */
export function loadWorkerConfig(env: Env, sources: ConfigSources = {}): WorkerConfig {
  const reader = new EnvReader(env);
  const common = readCommonConfig(reader, sources);
  const config: WorkerConfig = {
    ...common,
    app: 'worker',
    concurrency: reader.integer('WORKER_CONCURRENCY', 10, { min: 1, max: 1000 }),
    shards: readShards(reader, common.queue.shards),
    backupImage: reader.string(
      'BACKUP_IMAGE',
      DEFAULT_BACKUP_IMAGE,
      /^[a-z0-9][a-z0-9._\-/:]*(@sha256:[a-f0-9]{64})?$/i,
      'a container image reference such as registry.example.com/backup:1.0',
    ),
    allowedImages: reader.list(
      'BACKUP_IMAGE_ALLOWLIST',
      /^[a-z0-9][a-z0-9._\-/:]*(\/\*|@sha256:[a-f0-9]{64})?$/i,
      'image repositories, each optionally with :tag, @sha256:digest or /* (all below a path)',
    ),
    grantRecheckMs: reader.duration('GRANT_RECHECK_INTERVAL', '5m', 1000),
    grantCacheTtlMs: reader.duration('GRANT_CACHE_TTL', '30s', 0),
  };
  reader.finish();
  return config;
}

/** `0,3,8-11` → [0,3,8,9,10,11], each within the QUEUE_SHARDS shards. */
function readShards(env: EnvReader, total: number): number[] {
  const all = Array.from({ length: total }, (_, i) => i);
  const value = env.raw('WORKER_SHARDS');
  if (value === undefined) return all;
  const shards = new Set<number>();
  for (const item of value.split(',').map((s) => s.trim())) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(item);
    const from = Number(match?.[1]);
    const to = Number(match?.[2] ?? match?.[1]);
    if (!match || from > to || to >= total) {
      const expected = `shard numbers or ranges from 0 to ${total - 1} (QUEUE_SHARDS=${total}) such as "0,2,4-7"`;
      return env.fail('WORKER_SHARDS', expected, value, all);
    }
    for (let shard = from; shard <= to; shard++) shards.add(shard);
  }
  return [...shards].sort((a, b) => a - b);
}
