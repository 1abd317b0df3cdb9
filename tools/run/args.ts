import { parseArgs } from 'node:util';

export interface RunOptions {
  workers: number;
  /** Serve the read-only queue dashboard (Bull Board) from the watcher. */
  dashboard: boolean;
  help: boolean;
}

export const USAGE = `usage: npm run start:local -- [--workers N] [--dashboard]     (make run [DASHBOARD=1])

Runs one watcher and N workers (default 1) from this tree against the cluster of the current
kubeconfig context (KUBECONFIG, else ~/.kube/config), the way the chart runs them in the cluster.
The BackupJob CRD must be installed first (make install).

  --workers N   worker processes to start (1-16, default 1)
  --dashboard   serve the read-only queue dashboard (Bull Board) from the watcher on a free
                loopback port, and print its URL
  -h, --help    this text

REDIS_URL (one server), REDIS_CLUSTER_NODES (a Redis Cluster) or REDIS_SENTINELS with
REDIS_SENTINEL_MASTER (Sentinel), when set, name the Redis to use; otherwise a private
redis-server from PATH is started.
WATCH_NAMESPACES, LOG_LEVEL and the other variables of libs/config/README.md pass through.
Ctrl-C stops everything.`;

/** Parses the command line; throws an Error naming the flag on a bad value. */
export function parseRunArgs(argv: readonly string[]): RunOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      workers: { type: 'string', default: '1' },
      dashboard: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  const workers = Number(values.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > 16)
    throw new Error(`--workers must be an integer from 1 to 16, got "${values.workers}"`);
  return { workers, dashboard: values.dashboard, help: values.help };
}
