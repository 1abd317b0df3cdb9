import type { BackupJob } from '#api';
import {
  gaugeFamilyHeader,
  gaugeSampleLine,
  linesText,
  type GaugeSample,
  type MetricsTextSource,
} from '#observability';
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

interface FamilyOf {
  readonly name: string;
  readonly help: string;
  samples(state: BackupJobState): GaugeSample[];
}

const of = (s: BackupJobState) => ({ namespace: s.namespace, name: s.name });

/** A 1-or-0 gauge per BackupJob. */
const flag = (name: string, help: string, pick: (s: BackupJobState) => boolean): FamilyOf => ({
  name,
  help,
  samples: (s) => [{ labels: of(s), value: pick(s) ? 1 : 0 }],
});

/** A Unix-time gauge per BackupJob, absent while there is no such time. */
const time = (
  name: string,
  help: string,
  pick: (s: BackupJobState) => Date | undefined,
): FamilyOf => ({
  name,
  help,
  samples: (s) => {
    const at = pick(s);
    return at ? [{ labels: of(s), value: seconds(at) }] : [];
  },
});

const FAMILIES: readonly FamilyOf[] = [
  flag(
    'backupjob_ready',
    'Whether the BackupJob is Ready (its Ready condition is True): 1 or 0.',
    (s) => s.ready,
  ),
  time(
    'backupjob_last_successful_backup_timestamp_seconds',
    'Unix time the last successful backup finished (status.lastBackupTime); absent before the first.',
    (s) => s.lastSuccessfulBackup,
  ),
  {
    name: 'backupjob_last_backup_result',
    help: 'The result of the newest finished backup (BackupSucceeded condition): 1 for the current result, 0 for the others.',
    samples: (s) =>
      BACKUP_RESULTS.map((result) => ({
        labels: { ...of(s), result },
        value: s.lastBackupResult === result ? 1 : 0,
      })),
  },
  flag(
    'backupjob_backup_overdue',
    'Whether a scheduled backup is overdue (BackupOverdue condition is True): 1 or 0.',
    (s) => s.overdue,
  ),
  time(
    'backupjob_next_scheduled_run_timestamp_seconds',
    'Unix time of the next scheduled backup from spec.schedule and spec.timeZone; absent when suspended or invalid.',
    (s) => s.nextScheduledRun,
  ),
];

/** One object's sample lines, per family, and the time until which they hold. */
interface Rendered {
  readonly lines: readonly (readonly string[])[];
  /** Epoch ms when the next run passes and must be computed anew. */
  readonly until: number;
}

function render(state: BackupJobState): Rendered {
  return {
    lines: FAMILIES.map((f) => f.samples(state).map((sample) => gaugeSampleLine(f.name, sample))),
    until: state.nextScheduledRun?.getTime() ?? Infinity,
  };
}

/**
 * Per-BackupJob metrics from the watcher's informer cache, as kube-state-metrics computes its
 * metrics from objects: a deleted BackupJob's series are gone at the next scrape, and only the
 * leader (the one process with a cache) exports them.
 *
 * Each object's lines are rendered once and kept beside it, keyed by the object itself: the
 * informer replaces an object on every change, so a changed BackupJob is rendered anew and a
 * deleted one's lines go with it. Only the next run depends on the clock, and it holds until it
 * passes. A scrape of tens of thousands of BackupJobs is thus a concatenation rather than a
 * schedule evaluation and schema check per object, which would hold the leader's event loop (and
 * its Lease renewal) for as long as it took.
 */
export function backupJobMetrics(options: BackupJobMetricsOptions): MetricsTextSource {
  const clock = options.clock ?? (() => new Date());
  const rendered = new WeakMap<BackupJob, Rendered>();
  return async () => {
    const objects = options.backupJobs();
    if (!objects) return '';
    const now = clock();
    const all: Rendered[] = [];
    for (const bj of objects) {
      let r = rendered.get(bj);
      if (!r || now.getTime() >= r.until) {
        r = render(backupJobState(bj, now, options.config));
        rendered.set(bj, r);
      }
      all.push(r);
    }
    const lines: string[] = [];
    for (const [i, family] of FAMILIES.entries()) {
      // A family without samples is left out, header and all, as gaugeFamiliesText does.
      if (!all.some((r) => r.lines[i]!.length > 0)) continue;
      lines.push(...gaugeFamilyHeader(family.name, family.help));
      for (const r of all) for (const line of r.lines[i]!) lines.push(line);
    }
    return linesText(lines);
  };
}
