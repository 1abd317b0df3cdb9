import { parseArgs } from 'node:util';
import { REDIS_MODES, type RedisMode } from '#testing';

export interface DevOptions {
  workers: number;
  simulateBackups: boolean;
  /** How much faster than real time schedules run with --simulate-backups. */
  clockFactor: number;
  /** Where the kubeconfig and the process logs go. */
  dir: string;
  /** Serve the read-only queue dashboard (Bull Board) from the watcher. */
  dashboard: boolean;
  /** The kind of private Redis to start: one server, a Cluster, or Sentinel. */
  redis: RedisMode;
  help: boolean;
}

export const USAGE = `usage: npm run dev -- [--workers N] [--simulate-backups [--clock-factor F]] [--dashboard]
                       [--redis standalone|cluster|sentinel] [--dir PATH]

Starts a Kubernetes API emulator, Redis, one watcher and N workers (default 2) on this machine,
applies the BackupJob CRD and config/samples/ops_v1alpha1_backupjob.yaml, and prints how to use it.

  --workers N          worker processes to start (1-16, default 2)
  --simulate-backups   run the CronJobs on a clock F times faster than real time, so that
                       backups happen and lastBackupTime moves
  --clock-factor F     the speed-up of --simulate-backups (default 1440: a day per minute)
  --dashboard          serve the read-only queue dashboard (Bull Board) from the watcher; its URL
                       is printed with the processes
  --redis MODE         the private Redis to start: standalone (one redis-server, the default),
                       cluster (a Redis Cluster of 3 primaries with a replica each, reached
                       through REDIS_CLUSTER_NODES) or sentinel (a primary, a replica and a
                       Sentinel, reached through REDIS_SENTINELS)
  --dir PATH           where the kubeconfig and the logs are written (default .dev)
  -h, --help           this text

REDIS_URL, when set, names the Redis to use (one server); otherwise a private Redis of the
--redis mode is started from the redis-server on PATH.
Ctrl-C, or SIGINT or SIGTERM to its process, stops everything.`;

function integer(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`--${flag} must be an integer from ${min} to ${max}, got "${value}"`);
  return n;
}

function redisMode(value: string): RedisMode {
  if (!(REDIS_MODES as readonly string[]).includes(value))
    throw new Error(`--redis must be one of ${REDIS_MODES.join(', ')}, got "${value}"`);
  return value as RedisMode;
}

/** Parses the command line; throws an Error naming the flag on a bad value. */
export function parseDevArgs(argv: readonly string[]): DevOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      workers: { type: 'string', default: '2' },
      'simulate-backups': { type: 'boolean', default: false },
      'clock-factor': { type: 'string', default: '1440' },
      dashboard: { type: 'boolean', default: false },
      dir: { type: 'string', default: '.dev' },
      redis: { type: 'string', default: 'standalone' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  return {
    workers: integer(values.workers, 'workers', 1, 16),
    simulateBackups: values['simulate-backups'],
    clockFactor: integer(values['clock-factor'], 'clock-factor', 1, 10_000_000),
    dir: values.dir,
    dashboard: values.dashboard,
    redis: redisMode(values.redis),
    help: values.help,
  };
}
