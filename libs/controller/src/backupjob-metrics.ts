import type { BackupJob } from '#api';
import { gaugeFamiliesText, type GaugeFamily, type MetricsTextSource } from '#observability';
import {
  BACKUP_RESULTS,
  backupJobState,
  type BackupJobState,
  type ReconcilerConfig,
} from '#reconciler';

export interface BackupJobMetricsOptions {
  /**
   * The BackupJobs of the leader's synced informer cache; undefined while this process has none
   * (a standby, or a leader still listing), which exports no backupjob_* series at all.
   */
  readonly backupJobs: () => Iterable<BackupJob> | undefined;
  /** For the default time zone of the next-run computation. */
  readonly config: ReconcilerConfig;
  readonly clock?: () => Date;
}

const seconds = (date: Date) => date.getTime() / 1000;

function families(states: readonly BackupJobState[]): GaugeFamily[] {
  const of = (s: BackupJobState) => ({ namespace: s.namespace, name: s.name });
  const timestamps = (pick: (s: BackupJobState) => Date | undefined) =>
    states.flatMap((s) => {
      const at = pick(s);
      return at ? [{ labels: of(s), value: seconds(at) }] : [];
    });
  return [
    {
      name: 'backupjob_ready',
      help: 'Whether the BackupJob is Ready (its Ready condition is True): 1 or 0.',
      samples: states.map((s) => ({ labels: of(s), value: s.ready ? 1 : 0 })),
    },
    {
      name: 'backupjob_last_successful_backup_timestamp_seconds',
      help: 'Unix time the last successful backup finished (status.lastBackupTime); absent before the first.',
      samples: timestamps((s) => s.lastSuccessfulBackup),
    },
    {
      name: 'backupjob_last_backup_result',
      help: 'The result of the newest finished backup (BackupSucceeded condition): 1 for the current result, 0 for the others.',
      samples: states.flatMap((s) =>
        BACKUP_RESULTS.map((result) => ({
          labels: { ...of(s), result },
          value: s.lastBackupResult === result ? 1 : 0,
        })),
      ),
    },
    {
      name: 'backupjob_backup_overdue',
      help: 'Whether a scheduled backup is overdue (BackupOverdue condition is True): 1 or 0.',
      samples: states.map((s) => ({ labels: of(s), value: s.overdue ? 1 : 0 })),
    },
    {
      name: 'backupjob_next_scheduled_run_timestamp_seconds',
      help: 'Unix time of the next scheduled backup from spec.schedule and spec.timeZone; absent when suspended or invalid.',
      samples: timestamps((s) => s.nextScheduledRun),
    },
  ];
}

/**
 * Per-BackupJob metrics computed at scrape time from the watcher's informer cache, as
 * kube-state-metrics computes its metrics from objects: nothing is kept between scrapes, a
 * deleted BackupJob's series are gone at the next scrape, and only the leader (the one process
 * with a cache) exports them.
 */
export function backupJobMetrics(options: BackupJobMetricsOptions): MetricsTextSource {
  const clock = options.clock ?? (() => new Date());
  return async () => {
    const objects = options.backupJobs();
    if (!objects) return '';
    const now = clock();
    const states = [...objects].map((bj) => backupJobState(bj, now, options.config));
    return gaugeFamiliesText(families(states));
  };
}
